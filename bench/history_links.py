"""How often prguide's "fixes code from #N" is right, next to plain SZZ, on developer-informed links.

The oracle (``tests/data/history_oracle.json``) holds pairs (fix, introducing pull
request) from verl-project/verl: merged fixes whose message names the pull request
that introduced the bug ("introduced in #N", "regression from #N", "broken by #N"...),
each checked by reading both diffs; a fix may have several true origins. A pair's
``kind`` is ``modifies`` when the fix deletes or changes a line the other's diff added
(same text), ``adds`` when it only adds what the other left out: blame cannot find
those, so recall is also given on the fixes with a ``modifies`` pair.

On a local clone of that repository (``--repo CLONE``, or ``$PRGUIDE_VERL_CLONE``), every
oracle fix is rebuilt from git as ``prguide history`` does, and in the same run:

* **prguide**: :func:`bot.engine.history.links.find_link` on the meaningful deleted
  lines (:func:`bot.engine.history.lines.trace_plan`'s ``to_blame``: of code, else of
  CI files and example scripts, then with a unanimous origin), blamed by
  :class:`bot.sources.githistory.HistoryReader` (replay, window, ``.git-blame-ignore-revs``):
  it answers only when one pull request clearly dominates; for a fix they name nobody for,
  the pull request that added the same lines as the fix (:mod:`bot.engine.history.copies`,
  the earlier diffs read by :func:`bot.sources.gitadded.earlier_added`);
* **plain SZZ**: every deleted line blamed (``git blame``, no filters, no window, no
  ignored revisions), answering the pull request of the most recently merged commit
  blamed.

Precision is right answers over answers; recall is fixes answered rightly over oracle
fixes. Target: precision >= 0.85 at recall >= 0.6, above plain SZZ on both, stating none
of the oracle's rejected claims. Also printed: variants not used by the guide (moved
lines counted in the shares; for fixes without a traced deleted line, the lines around
their insertions, :func:`bot.engine.history.lines.insertion_context`); ablations (one
part of prguide off at a time); why each fix prguide misses is missed (first reason
that applies: no deleted line, every deleted line dropped, no clear winner, origin older
than the window, origin wrote none of the traced lines, another pull request wrote
most); both methods on each half of the oracle, by fix number and by its parity;
other kinds of evidence for the fixes prguide names nobody for (``history_evidence.py``:
the one pull request that added the same lines as the fix, that changed the functions it
changes, that defined a name its added lines use, or that wrote all its lines in a wider
window), each setting chosen
on one parity half and scored on the other; the dominance thresholds chosen
on one half of the oracle (by fix number) and scored on the other, both ways; the
description check ("introduced in #N" against the blame) on the oracle's true and
rejected claims; and speed: the blame step of ``prguide history`` on the newest
``--speed N`` pull requests, with the replay and with one ``git blame`` per file, and
whether the two agree line for line.

    python bench/history_links.py --repo CLONE [--speed 300]
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import history_evidence
from common import ROOT, header, verdict_line

from bot.engine.analysis.patch import parse_patch  # noqa: E402
from bot.engine.history import lines as history_lines  # noqa: E402
from bot.engine.history.links import MIN_LEAD, MIN_SHARE, find_link, named_culprits  # noqa: E402
from bot.engine.history.model import HistoryFacts  # noqa: E402
from bot.engine.snapshot import PullRequestSnapshot  # noqa: E402
from bot.sources.bundle import snapshot_from_bundle  # noqa: E402
from bot.sources.githistory import WINDOW_DAYS, HistoryReader, TraceRequest  # noqa: E402
from bot.sources.gitadded import earlier_added  # noqa: E402
from bot.sources.gitrepo import merged_pull_requests  # noqa: E402
from bot.sources.gitrun import open_repository  # noqa: E402

ORACLE = ROOT / "tests" / "data" / "history_oracle.json"


@dataclass
class Case:
    number: int
    truth: set[int]
    modifies: bool
    snapshot: PullRequestSnapshot
    base: str | None


def load_cases(repo: str, oracle: dict) -> list[Case]:
    """The oracle's fixes rebuilt from the clone (bundles as ``prguide history`` makes them)."""
    truth: dict[int, set[int]] = {}
    modifies: set[int] = set()
    for pair in oracle["pairs"]:
        truth.setdefault(pair["fix"], set()).add(pair["introduced_by"])
        if pair.get("kind") == "modifies":
            modifies.add(pair["fix"])
    bundles = merged_pull_requests(repo, numbers=set(truth), repository=oracle["repository"])
    cases = []
    for b in bundles:
        n = b["pull"]["number"]
        cases.append(Case(n, truth[n], n in modifies, snapshot_from_bundle(b), b["pull"]["base"]["sha"]))
    missing = sorted(set(truth) - {c.number for c in cases})
    if missing:
        print(f"warning: {len(missing)} oracle fixes not found in the clone: {missing[:10]}", file=sys.stderr)
    return sorted(cases, key=lambda c: c.number)


def score(answers: dict[int, int | None], cases: Sequence[Case]) -> tuple[float, float, int, int]:
    """``(precision, recall, answered, right)`` of ``answers`` on ``cases``."""
    answered = [c for c in cases if answers.get(c.number) is not None]
    right = sum(1 for c in answered if answers[c.number] in c.truth)
    return (right / len(answered) if answered else 0.0), (right / len(cases) if cases else 0.0), len(answered), right


def blame_all(reader: HistoryReader, cases: Sequence[Case], lines: dict[int, tuple], method: str) -> dict[int, HistoryFacts]:
    return reader.facts([TraceRequest(c.number, c.base, tuple(lines[c.number])) for c in cases], method=method)


def plain_szz(cases: Sequence[Case], facts: dict[int, HistoryFacts]) -> dict[int, int | None]:
    """The pull request of the most recently merged commit blamed for any deleted line."""
    out: dict[int, int | None] = {}
    for c in cases:
        f = facts[c.number]
        best = max(((f.pulls[o.pull].merged_at, o.pull) for o in f.origins if o.pull not in (None, c.number)), default=None)
        out[c.number] = best[1] if best else None
    return out


def with_added(facts: HistoryFacts, added, pulls) -> HistoryFacts:
    """``facts`` with the earlier pull requests that added the same lines (``HistoryFacts.added``)."""
    if not facts.available or not added:
        return facts
    return dataclasses.replace(facts, added=tuple(added), pulls={**{e.number: pulls[e.number] for e in added}, **facts.pulls})


def prguide_answers(cases, lines, facts, relocated=None, unanimous=frozenset(), **thresholds) -> dict[int, int | None]:
    """prguide's answer per fix; ``relocated`` ``{fix: lines moved to another file}`` counted
    in the shares (:func:`bot.engine.history.links.rank`; the guide counts none); the fixes
    in ``unanimous`` (their lines are CI and example lines, ``TracePlan.unanimous``) need a
    unanimous origin."""
    out = {}
    for c in cases:
        moved = relocated.get(c.number, 0) if relocated else 0
        link = find_link(c.snapshot, lines[c.number], facts[c.number], fix=True, unanimous=c.number in unanimous, relocated=moved, **thresholds)
        out[c.number] = link.top.number if link.top else link.same.number if link.same else None
    return out


def with_insertions(cases, first, lines, context, facts, *, when: str, unanimous: bool = False) -> dict[int, int | None]:
    """``first``'s answers, and for the fixes it leaves unanswered (``when="unanswered"``) or
    that have no traced deleted line (``when="no-lines"``), the pull request that clearly
    wrote the lines around their insertions (:func:`bot.engine.history.lines.insertion_context`),
    under the same dominance rule."""
    out = dict(first)
    for c in cases:
        if out.get(c.number) is not None or (when == "no-lines" and lines[c.number]):
            continue
        link = find_link(c.snapshot, context[c.number], facts[c.number], fix=True, unanimous=unanimous)
        out[c.number] = link.top.number if link.top else None
    return out


def misses(cases, answers, lines, plans, facts, wide) -> list[str]:
    """Why each oracle fix is not answered rightly, first reason that applies, with the fixes."""
    reasons: dict[str, list[int]] = {}
    for c in cases:
        answer = answers.get(c.number)
        if answer in c.truth:
            continue
        deleted = sum(1 for f in c.snapshot.files for d in parse_patch(f.patch) for x in d.lines if x.kind == "-")
        blamed = {o.pull for o in facts[c.number].origins if o.pull is not None}
        older = {o.pull for o in wide[c.number].origins if o.pull is not None}
        if answer is not None:
            why = "wrong answer: another pull request wrote most traced lines"
        elif not deleted:
            why = "adds only: no deleted line"
        elif not lines[c.number]:
            top = max(plans[c.number].dropped, key=plans[c.number].dropped.get)
            why = f"no traced line: all deleted lines dropped (mostly {top})"
        elif c.truth & blamed:
            why = "no clear winner: the origin wrote some traced lines, not most"
        elif c.truth & older:
            why = "the origin's lines are older than the window"
        else:
            why = "the origin wrote none of the traced lines"
        reasons.setdefault(why, []).append(c.number)
    return [f"| {why} | {len(ns)} | {', '.join(f'#{n}' for n in ns)} |" for why, ns in sorted(reasons.items(), key=lambda kv: -len(kv[1]))]


def rejected_stated(answers, oracle) -> list[tuple[int, int]]:
    """The oracle's rejected pairs (fix, claimed origin) that ``answers`` state."""
    return sorted((p["fix"], p["introduced_by"]) for p in oracle["rejected"] if answers.get(p["fix"]) == p["introduced_by"])


def row(name: str, answers: dict[int, int | None], cases: Sequence[Case]) -> str:
    p, r, n, right = score(answers, cases)
    _, rm, _, _ = score(answers, [c for c in cases if c.modifies])
    return f"| {name} | {p:.2f} | {r:.2f} | {rm:.2f} | {n} | {right} |"


def split_check(cases, lines, facts, unanimous) -> list[str]:
    """Thresholds picked on one half (most right answers at precision >= 0.85, else the most
    precise), scored on the other half."""
    grid = list(itertools.product((0.34, 0.5, 0.67, 0.8), (1.0, 1.5, 2.0, 3.0), (1, 2)))
    ordered = sorted(cases, key=lambda c: c.number)
    half = len(ordered) // 2
    out = []
    for name, train, test in (("older -> newer", ordered[:half], ordered[half:]), ("newer -> older", ordered[half:], ordered[:half])):
        scored = [(score(prguide_answers(train, lines, facts, unanimous=unanimous, min_share=s, min_lead=ld, min_lines=m), train), (s, ld, m)) for s, ld, m in grid]
        good = [x for x in scored if x[0][0] >= 0.85]
        (tp, tr, _, _), (s, ld, m) = max(good, key=lambda x: (x[0][3], x[0][0])) if good else max(scored, key=lambda x: x[0][0])
        p, r, n, right = score(prguide_answers(test, lines, facts, unanimous=unanimous, min_share=s, min_lead=ld, min_lines=m), test)
        out.append(f"| {name} | share {s}, lead {ld}, lines {m} | {tp:.2f} / {tr:.2f} | {p:.2f} / {r:.2f} ({right}/{len(test)}) |")
    return out


def fallback_split(cases, lines, facts, unanimous) -> list[str]:
    """The rule for the fallback lines (CI and example lines, lines around insertions:
    share and lines of the top pull request) picked on one half as :func:`split_check`
    does, the ordinary rule unchanged, scored on the other half."""
    grid = list(itertools.product((0.5, 0.67, 1.0), (1, 2, 3)))

    def answers(part, share, least):
        out = {}
        for c in part:
            if c.number in unanimous:
                link = find_link(c.snapshot, lines[c.number], facts[c.number], fix=True, min_share=share, min_lines=least)
            else:
                link = find_link(c.snapshot, lines[c.number], facts[c.number], fix=True)
            out[c.number] = link.top.number if link.top else None
        return out

    ordered = sorted(cases, key=lambda c: c.number)
    half = len(ordered) // 2
    out = []
    for name, train, test in (("older -> newer", ordered[:half], ordered[half:]), ("newer -> older", ordered[half:], ordered[:half])):
        # As split_check: most right answers at precision >= 0.85, else the most precise;
        # ties go to the stricter rule.
        scored = [(score(answers(train, s, m), train), (s, m)) for s, m in grid]
        good = [x for x in scored if x[0][0] >= 0.85]
        pick = (lambda x: (x[0][3], x[0][0], x[1])) if good else (lambda x: (x[0][0], x[0][3], x[1]))
        (tp, tr, _, _), (s, m) = max(good or scored, key=pick)
        p, r, n, right = score(answers(test, s, m), test)
        out.append(f"| {name} | share {s}, lines {m} | {tp:.2f} / {tr:.2f} | {p:.2f} / {r:.2f} ({right}/{len(test)}) |")
    return out


def named_check(cases, lines, facts, unanimous, oracle, repository, adds=frozenset()) -> list[str]:
    """How often the blame bears out the culprit a description names, for true and rejected claims."""
    true_pairs = {(p["fix"], p["introduced_by"]) for p in oracle["pairs"]}
    rejected = {(p["fix"], p["introduced_by"]) for p in oracle["rejected"]}
    counts = {"true": [0, 0, 0], "rejected": [0, 0, 0]}  # parsed, agrees, blamed at all
    by_number = {c.number: c for c in cases}
    for pairs, key in ((true_pairs, "true"), (rejected, "rejected")):
        for fix, culprit in pairs:
            c = by_number.get(fix)
            if c is None or culprit not in {n for n, _ in named_culprits(c.snapshot.body, repository, fix)}:
                continue
            counts[key][0] += 1
            # Around what a fix only adds, the guide gives no verdict on the named culprit.
            link = find_link(c.snapshot, () if fix in adds else lines[fix], facts[fix], fix=True, unanimous=fix in unanimous)
            named = next(n for n in link.named if n.number == culprit)
            counts[key][1] += named.lines > 0
            counts[key][2] += named.total > 0
    return [f"| {k} claims | {len([p for p in (true_pairs if k == 'true' else rejected)])} | {v[0]} | {v[2]} | {v[1]} |" for k, v in counts.items()]


def speed(repo_path: str, n: int) -> tuple[list[str], float]:
    """The blame step of ``prguide history --last n`` (each pull request's ``to_blame`` lines):
    replay against git blame, and agreement;
    returns the table rows and the replay's pull requests per second."""
    started = time.perf_counter()
    bundles = merged_pull_requests(repo_path, last=n)
    read = time.perf_counter() - started
    reqs = []
    snapshots = []
    for b in bundles:
        s = snapshot_from_bundle(b)
        snapshots.append(s)
        reqs.append(TraceRequest(s.number, b["pull"]["base"]["sha"], history_lines.trace_plan(s.files).to_blame))
    repo = open_repository(repo_path)
    rows, results, rates = [], {}, {}
    for method in ("replay", "blame"):
        started = time.perf_counter()
        results[method] = HistoryReader(repo).facts(reqs, method=method)
        took = time.perf_counter() - started
        rates[method] = len(reqs) / took
        rows.append(f"| {method} | {len(reqs)} | {sum(len(r.lines) for r in reqs)} | {took:.2f} s | {len(reqs) / took:.0f} |")
    same = sum(
        1 for r in reqs for a, b in zip(results["replay"][r.number].origins, results["blame"][r.number].origins) if a == b
    )
    total = sum(len(results["blame"][r.number].origins) for r in reqs)
    rows.append(f"\nreplay and blame agree on {same} of {total} lines; reading the {len(bundles)} pull requests from git took {read:.2f} s")
    # The other history step of prguide history: the earlier pull requests that added the same lines.
    started, cpu = time.perf_counter(), time.process_time()
    added, _ = earlier_added(repo, snapshots)
    rows.append(f"finding the earlier pull requests that added the same lines (their diffs read from git) took {time.perf_counter() - started:.2f} s "
                f"({time.process_time() - cpu:.2f} s of CPU in this process); {len(added)} of the {len(snapshots)} pull requests share lines with one")
    return rows, rates["replay"]


def evidence_kinds(repo_path, repo, cases, ours, lines, unanimous, whole) -> list[str]:
    """Other kinds of evidence for the fixes the blamed lines name nobody for (``ours``:
    prguide's answers from them alone; :mod:`history_evidence`), each setting chosen on one
    parity half and scored on the other."""
    started = time.perf_counter()
    history = history_evidence.definitions_history(repo_path)
    wide = {days: blame_all(HistoryReader(repo, window_days=days), cases, lines, "replay") for days in (240, 365)}
    wide[0] = whole
    out = [
        f"\nKinds of evidence, for the fixes the blamed lines name nobody for ({len(history)} merged pull requests analysed "
        f"in {time.perf_counter() - started:.1f} s); the setting is chosen on one parity half (most right added answers at "
        "precision >= 0.85, else the most precise) and scored on the other; the guide uses \"same added lines\" "
        "(60 days, lead >= 3x), not the others:\n",
        "| kind | chosen on | setting | added answers right / given, that half | held-out half | prguide with it, that half (P / R) | held-out half (P / R) |",
        "| --- | --- | --- | ---: | ---: | --- | --- |",
    ]
    added = history_evidence.added_history(repo_path)
    for kind, grid in history_evidence.grids(cases, ours, lines, history, wide, added).items():
        for dev, label, own, held, (p1, r1, n1, k1), (p2, r2, n2, k2) in history_evidence.chosen_on_half(cases, ours, grid, score):
            out.append(f"| {kind} | {dev} | {label} | {own[0]} / {own[1]} | {held[0]} / {held[1]} | {p1:.3f} / {r1:.2f} ({k1}/{n1}) | {p2:.3f} / {r2:.2f} ({k2}/{n2}) |")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--repo", default=os.environ.get("PRGUIDE_VERL_CLONE"),
        help="a clone of verl-project/verl (default: $PRGUIDE_VERL_CLONE)",
    )  # fmt: skip
    parser.add_argument("--oracle", type=Path, default=ORACLE)
    parser.add_argument("--speed", type=int, default=300, help="pull requests for the speed run (0: none)")
    args = parser.parse_args(argv)
    if not args.repo:
        parser.error("give a clone of verl-project/verl with --repo CLONE (or $PRGUIDE_VERL_CLONE)")
    oracle = json.loads(args.oracle.read_text(encoding="utf-8"))
    print(header("History links: \"fixes code from #N\" against developer-informed links"))
    print(f"settings: window {WINDOW_DAYS} days, share >= {MIN_SHARE}, lead >= {MIN_LEAD}x\n")
    started = time.perf_counter()
    cases = load_cases(args.repo, oracle)
    mod = sum(c.modifies for c in cases)
    print(f"oracle: {len(oracle['pairs'])} true pairs over {len(cases)} fixes ({mod} change lines their origin wrote); "
          f"{len(oracle['rejected'])} claims rejected; rebuilt in {time.perf_counter() - started:.1f} s\n")  # fmt: skip
    repo = open_repository(args.repo)
    plans = {c.number: history_lines.trace_plan(c.snapshot.files) for c in cases}
    meaningful = {n: plan.to_blame for n, plan in plans.items()}
    unanimous = {n for n, plan in plans.items() if plan.unanimous}
    relocated = {n: plan.dropped.get("moved", 0) for n, plan in plans.items()}
    deleted = {n: plan.traced or plan.fallback for n, plan in plans.items()}
    strict_deleted = {n for n, plan in plans.items() if not plan.traced and plan.fallback}
    context = {c.number: history_lines.insertion_context(c.snapshot.files) for c in cases}
    every = {c.number: history_lines.deleted_lines(c.snapshot.files) for c in cases}
    blamed = blame_all(HistoryReader(repo), cases, meaningful, "replay")
    # As prguide history gives them: with the earlier pull requests that added the same lines.
    same, same_pulls = earlier_added(repo, [c.snapshot for c in cases])
    facts = {n: with_added(f, same.get(n, ()), same_pulls) for n, f in blamed.items()}
    plain = blame_all(HistoryReader(repo, window_days=0, ignore_revs=False), cases, every, "blame")

    print("| method | precision | recall (all fixes) | recall (fixes that change their origin's lines) | answered | right |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    ours, baseline = prguide_answers(cases, meaningful, facts, unanimous=unanimous), plain_szz(cases, plain)
    blame_only = prguide_answers(cases, meaningful, blamed, unanimous=unanimous)
    print(row("**prguide**", ours, cases))
    print(row("plain SZZ (most recent blamed commit, no filters)", baseline, cases))
    print(row("prguide, blamed lines only (no \"added the same lines\")", blame_only, cases))
    # The tiers of TracePlan.to_blame, one at a time, and variants the guide does not use.
    code_only = prguide_answers(cases, {n: p.traced for n, p in plans.items()}, facts)
    print(row("prguide, deleted lines of code only", code_only, cases))
    print(row("prguide, deleted lines of code, else of CI files and example scripts", prguide_answers(cases, deleted, facts, unanimous=strict_deleted), cases))
    around = blame_all(HistoryReader(repo), cases, context, "replay")
    first = prguide_answers(cases, deleted, facts, unanimous=strict_deleted)
    print(row("prguide, lines around insertions under the ordinary dominance rule", with_insertions(cases, first, deleted, context, around, when="no-lines"), cases))
    print(row("prguide, lines around insertions (unanimous) whenever it names nobody", with_insertions(cases, first, deleted, context, around, when="unanswered", unanimous=True), cases))
    print(row("prguide, moved lines counted in the shares (naming nobody)", prguide_answers(cases, meaningful, facts, relocated, unanimous), cases))
    # Ablations: prguide with one part off.
    unfiltered = {c.number: history_lines.trace_plan(c.snapshot.files, keep=history_lines.DROP_REASONS).traced for c in cases}
    print(row("prguide, no line filters", prguide_answers(cases, unfiltered, blame_all(HistoryReader(repo), cases, unfiltered, "replay")), cases))
    wide = blame_all(HistoryReader(repo, window_days=0), cases, meaningful, "replay")
    print(row("prguide, no window", prguide_answers(cases, meaningful, wide, unanimous=unanimous), cases))
    print(row("prguide, no .git-blame-ignore-revs", prguide_answers(cases, meaningful, blame_all(HistoryReader(repo, ignore_revs=False), cases, meaningful, "replay"), unanimous=unanimous), cases))
    print(row("prguide lines, plain SZZ answer (most recent)", plain_szz(cases, facts), cases))
    print(row("prguide, any top candidate (no dominance)", prguide_answers(cases, meaningful, facts, unanimous=unanimous, min_share=0, min_lead=0), cases))

    print("\nWhy prguide does not name the right origin, per oracle fix (first reason that applies):\n")
    print("| reason | fixes | which |")
    print("| --- | ---: | --- |")
    print("\n".join(misses(cases, ours, meaningful, plans, facts, wide)))
    ordered = sorted(cases, key=lambda c: c.number)
    print("\nBy half of the oracle (fix number), precision / recall:\n")
    print("| method | older half | newer half |")
    print("| --- | --- | --- |")
    for name, answers in (("**prguide**", ours), ("prguide, deleted lines of code only", code_only), ("plain SZZ", baseline)):
        cells = [score(answers, part) for part in (ordered[: len(ordered) // 2], ordered[len(ordered) // 2 :])]
        print(f"| {name} | " + " | ".join(f"{p:.2f} / {r:.2f} ({right}/{n})" for p, r, n, right in cells) + " |")

    parity = history_evidence.halves(cases)
    print("\nBy parity of the fix's number (the split the kinds of evidence below are chosen on), precision / recall:\n")
    print("| method | odd | even |")
    print("| --- | --- | --- |")
    for name, answers in (("**prguide**", ours), ("prguide, blamed lines only", blame_only), ("plain SZZ", baseline)):
        cells = [score(answers, parity[half]) for half in ("odd", "even")]
        print(f"| {name} | " + " | ".join(f"{p:.2f} / {r:.2f} ({right}/{n})" for p, r, n, right in cells) + " |")
    print("\n".join(evidence_kinds(args.repo, repo, cases, blame_only, meaningful, unanimous, wide)))

    print("\nThresholds chosen on one half, scored on the other (precision / recall):\n")
    print("| split | chosen | on its own half | on the other half |")
    print("| --- | --- | --- | --- |")
    print("\n".join(split_check(cases, meaningful, facts, unanimous)))

    print("\nThe rule for the fallback lines (unanimous: share 1.0, lines 2) chosen on one half, scored on the other:\n")
    print("| split | chosen | on its own half | on the other half |")
    print("| --- | --- | --- | --- |")
    print("\n".join(fallback_split(cases, meaningful, facts, unanimous)))

    print("\nThe description's named culprit against the blame:\n")
    print("| claims | pairs | phrase found | lines blamed | blame agrees |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print("\n".join(named_check(cases, meaningful, facts, unanimous, oracle, oracle["repository"], {n for n, p in plans.items() if p.adds_only})))
    stated = rejected_stated(ours, oracle)

    per_second = None
    if args.speed:
        print(f"\nSpeed: blaming the traced lines of the newest {args.speed} pull requests:\n")
        print("| method | PRs | lines | time | PRs/s |")
        print("| --- | ---: | ---: | ---: | ---: |")
        rows, per_second = speed(args.repo, args.speed)
        print("\n".join(rows))

    p, r, _, _ = score(ours, cases)
    _, rm, _, _ = score(ours, [c for c in cases if c.modifies])
    bp, br, _, _ = score(baseline, cases)
    _, brm, _, _ = score(baseline, [c for c in cases if c.modifies])
    print()
    print(verdict_line("precision >= 0.85", f"{p:.2f}", p >= 0.85))
    print(verdict_line("recall >= 0.6, all oracle fixes", f"{r:.2f}", r >= 0.6))
    print(verdict_line("recall >= 0.6, fixes that change their origin's lines", f"{rm:.2f}", rm >= 0.6))
    print(verdict_line("none of the rejected claims stated", f"{len(stated)} of {len(oracle['rejected'])}" + (f": {stated}" if stated else ""), not stated))
    print(verdict_line("above plain SZZ on precision and recall", f"precision {p:.2f} vs {bp:.2f}, recall {r:.2f} vs {br:.2f} ({rm:.2f} vs {brm:.2f})", p > bp and r > br))
    if per_second is not None:
        print(verdict_line("blame step of prguide history >= 100 PRs/s", f"{per_second:.0f} PRs/s", per_second >= 100))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
