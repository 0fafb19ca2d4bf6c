"""How good the guides' judgement is, against a blind expert evaluation and over the whole corpus.

For every entry of ``tests/data/guide_eval.yml`` (written by a verl maintainer from the PR
record alone, without seeing a guide) the guide is built with the shipped rules plus
``config/examples/verl.yml`` and compared:

* **must-name recall**: of the 2-5 identifiers the expert says carry the change, the share
  that appear in the text of a *numbered* focus point (file, symbol or reason);
* **level**: the reading level (deep / quick / skim / skip) is the expert's;
* **minutes within 2x**: the guide's reading minutes are between half and twice the expert's;
* **importance within ±2** of the expert's 1-10;
* **breaking recall** (and precision): the PRs the expert calls breaking that the guide
  calls breaking (and the other way round).

Over every bundle of ``corpus/verl`` and ``corpus/verl-2026h1``: the share of PRs at
importance 10, the median importance, and how often the guide makes each kind of claim
(compatibility, config key, entry point, breaking, major version, generated file as a
numbered point), counted from the English text so that any version of prguide can be
measured the same way.

    python bench/guide_quality.py [--eval FILE] [--shared DIR] [--json]

The corpus is read from ``../shared`` beside the project root or ``$PRGUIDE_SHARED``.
Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # runnable from a checkout without installing prguide
    sys.path.insert(0, str(ROOT))

SHARED = Path(os.environ.get("PRGUIDE_SHARED", ROOT.parent / "shared"))
EVAL_FILE = ROOT / "tests" / "data" / "guide_eval.yml"
RULE_FILE = ROOT / "config" / "examples" / "verl.yml"
CORPUS_FOLDERS = ("verl", "verl-2026h1")

#: name -> (comparison, bound). The golden test asserts every one of them.
TARGETS: dict[str, tuple[str, float]] = {
    "must_name_recall": (">=", 0.8),
    "level_agreement": (">=", 0.8),
    "minutes_within_2x": (">=", 0.8),
    "importance_within_2": (">=", 0.9),
    "breaking_recall": (">=", 0.7),
    "corpus_share_at_10": ("<=", 0.05),
    "corpus_median_importance_min": (">=", 3),
    "corpus_median_importance_max": ("<=", 5),
}

#: Claim kinds and the English words that make them, in focus points and importance factors.
CLAIMS: dict[str, re.Pattern[str]] = {
    "compatibility": re.compile(r"compatibility", re.I),
    "config key": re.compile(r"config keys?\b|user-facing option", re.I),
    "entry point": re.compile(r"entry point", re.I),
    "major version": re.compile(r"major version", re.I),
    "breaking": re.compile(r"breaking", re.I),
}


@dataclass
class Case:
    """One eval entry next to what the guide said about it."""

    pr: str
    expected: Mapping[str, Any]
    level: str
    minutes: int
    importance: int
    breaking: bool
    named: list[str]
    missed: list[str]


@dataclass
class Report:
    """Every measured number; ``cases`` for the per-PR table."""

    cases: list[Case] = field(default_factory=list)
    corpus_prs: int = 0
    corpus_importance: list[int] = field(default_factory=list)
    claims: Counter[str] = field(default_factory=Counter)
    claim_prs: Counter[str] = field(default_factory=Counter)

    def metrics(self) -> dict[str, float]:
        """The headline numbers, as shares (0-1) and plain numbers."""
        cases = self.cases
        names = sum(len(c.named) + len(c.missed) for c in cases)
        expert_breaking = [c for c in cases if c.expected.get("breaking")]
        guide_breaking = [c for c in cases if c.breaking]
        ratio = lambda n, d: n / d if d else 1.0  # noqa: E731
        imp = self.corpus_importance
        return {
            "cases": len(cases),
            "must_name_recall": ratio(sum(len(c.named) for c in cases), names),
            "level_agreement": ratio(sum(c.level == c.expected["level"] for c in cases), len(cases)),
            "minutes_within_2x": ratio(sum(_within_2x(c.minutes, c.expected["minutes"]) for c in cases), len(cases)),
            "importance_within_2": ratio(sum(abs(c.importance - c.expected["importance"]) <= 2 for c in cases), len(cases)),
            "breaking_recall": ratio(sum(c.breaking for c in expert_breaking), len(expert_breaking)),
            "breaking_precision": ratio(sum(bool(c.expected.get("breaking")) for c in guide_breaking), len(guide_breaking)),
            "corpus_prs": self.corpus_prs,
            "corpus_share_at_10": ratio(sum(i >= 10 for i in imp), len(imp)),
            "corpus_median_importance": statistics.median(imp) if imp else 0,
            "corpus_median_importance_min": statistics.median(imp) if imp else 0,
            "corpus_median_importance_max": statistics.median(imp) if imp else 0,
        }

    def misses(self) -> list[str]:
        """The targets not met, as readable lines (empty when all hold)."""
        values = self.metrics()
        out = []
        for name, (op, bound) in TARGETS.items():
            value = values[name]
            ok = value >= bound if op == ">=" else value <= bound
            if not ok:
                out.append(f"{name} = {value:.3g}, target {op} {bound}")
        return out


def _within_2x(got: int, want: int) -> bool:
    return want / 2 <= got <= want * 2


_IDENT_EDGE = r"(?<![A-Za-z0-9_]){}(?![A-Za-z0-9_])"


def names_in(text: str, names: Iterable[str]) -> tuple[list[str], list[str]]:
    """Split ``names`` into those that occur in ``text`` as whole identifiers and those that do not.

    ``is_shuffled`` is found in ``Layer.is_shuffled`` and in `` `is_shuffled` ``, not in
    ``was_is_shuffled_x``; matching is case-sensitive, as identifiers are.
    """
    found, missed = [], []
    for name in names:
        (found if re.search(_IDENT_EDGE.format(re.escape(str(name))), text) else missed).append(str(name))
    return found, missed


def focus_text(data: Mapping[str, Any]) -> str:
    """The text of the guide's numbered focus points (file, symbol and reason of each)."""
    parts = []
    for point in data.get("focus", ()):
        parts += [str(point.get("file") or ""), str(point.get("symbol") or ""), str(point.get("reason") or "")]
    return "\n".join(parts)


def load_eval(path: Path = EVAL_FILE) -> list[dict[str, Any]]:
    """The eval entries (a YAML list of mappings with at least pr, level, minutes, importance, breaking, must_name)."""
    import yaml

    entries = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    if not isinstance(entries, list):
        raise SystemExit(f"{path}: expected a list of entries")
    return entries


def _rules() -> Any:
    from bot.engine.rules import load_rules

    return load_rules([RULE_FILE])


def _guide(path: Path, rules: Any) -> tuple[Any, Any]:
    from bot.engine.build import build_guide
    from bot.sources.bundle import load_bundle

    snapshot = load_bundle(path)
    return snapshot, build_guide(snapshot, rules, lang="en")


def _claims(data: Mapping[str, Any], generated: set[str]) -> Counter[str]:
    """How many times each claim kind is made in ``data``'s focus points and factors."""
    texts = [str(p.get("reason") or "") for p in data.get("focus", ())]
    texts += [str(f.get("reason") or "") for f in data.get("importance_factors", ()) if f.get("points", 0) > 0]
    out: Counter[str] = Counter()
    for text in texts:
        for kind, pattern in CLAIMS.items():
            if kind != "breaking" and pattern.search(text):
                out[kind] += 1
    if data.get("breaking"):
        out["breaking"] += 1
    for point in data.get("focus", ()):
        if (point.get("file") in generated) or re.search(r"\bis generated\b", str(point.get("reason") or "")):
            out["generated (numbered)"] += 1
    return out


def measure(shared: Path = SHARED, eval_path: Path = EVAL_FILE) -> Report:
    """Build every guide and collect the numbers. Raises ``SystemExit`` when the corpus is missing."""
    from bot.engine.analysis import analyse

    corpus = shared / "corpus"
    if not (corpus / "verl").is_dir():
        raise SystemExit(f"no corpus at {corpus} (set PRGUIDE_SHARED to the shared/ folder)")
    rules = _rules()
    report = Report()
    by_pr: dict[str, Mapping[str, Any]] = {}
    for folder in CORPUS_FOLDERS:
        for path in sorted((corpus / folder).glob("*.json")):
            snapshot, guide = _guide(path, rules)
            data = guide.data
            key = f"{folder}/{path.stem}"
            by_pr[key] = data
            generated = {f.path for f in analyse(snapshot).files if f.kind == "generated"}
            report.corpus_prs += 1
            report.corpus_importance.append(int(data["importance"]))
            claims = _claims(data, generated)
            report.claims.update(claims)
            report.claim_prs.update(claims.keys())
    for entry in load_eval(eval_path):
        pr = str(entry["pr"])
        data = by_pr.get(pr)
        if data is None:
            folder, _, number = pr.partition("/")
            _, guide = _guide(corpus / folder / f"{number}.json", rules)
            data = guide.data
        named, missed = names_in(focus_text(data), entry.get("must_name") or ())
        report.cases.append(
            Case(
                pr=pr,
                expected=entry,
                level=str(data["reading_level"]),
                minutes=int(data["reading_minutes"]),
                importance=int(data["importance"]),
                breaking=bool(data["breaking"]),
                named=named,
                missed=missed,
            )
        )
    return report


def _pct(x: float) -> str:
    return f"{x * 100:.0f} %"


def render(report: Report) -> str:
    """The report as Markdown: per-PR table, headline numbers with targets, claim counts."""
    m = report.metrics()
    lines = ["| PR | level (guide/expert) | minutes | importance | breaking | must-name missed |", "| --- | --- | --- | --- | --- | --- |"]
    for c in report.cases:
        e = c.expected
        lines.append(
            f"| {c.pr} | {c.level}/{e['level']} | {c.minutes}/{e['minutes']} | {c.importance}/{e['importance']} "
            f"| {'Y' if c.breaking else 'n'}/{'Y' if e.get('breaking') else 'n'} | {', '.join(c.missed) or '—'} |"
        )
    lines += [
        "",
        f"eval cases: {m['cases']}",
        f"must-name recall in numbered focus points: {m['must_name_recall']:.2f} (target >= 0.8)",
        f"level agreement: {_pct(m['level_agreement'])} (target >= 80 %)",
        f"minutes within 2x: {_pct(m['minutes_within_2x'])} (target >= 80 %)",
        f"importance within ±2: {_pct(m['importance_within_2'])} (target >= 90 %)",
        f"breaking recall: {_pct(m['breaking_recall'])} (target >= 70 %), precision: {_pct(m['breaking_precision'])}",
        f"corpus PRs: {m['corpus_prs']}",
        f"corpus share at importance 10: {_pct(m['corpus_share_at_10'])} (target <= 5 %)",
        f"corpus median importance: {m['corpus_median_importance']:g} (target 3-5)",
        "corpus importance histogram: "
        + " ".join(f"{i}:{n}" for i, n in sorted(Counter(report.corpus_importance).items())),
        "",
        "claims over the corpus (times made / PRs making it):",
    ]
    for kind in (*CLAIMS, "generated (numbered)"):
        lines.append(f"  {kind}: {report.claims.get(kind, 0)} / {report.claim_prs.get(kind, 0)}")
    misses = report.misses()
    lines += ["", "targets: " + ("all met" if not misses else "MISSED: " + "; ".join(misses))]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval", type=Path, default=EVAL_FILE, help="the expert evaluation YAML")
    parser.add_argument("--shared", type=Path, default=SHARED, help="the shared/ folder holding corpus/")
    parser.add_argument("--json", action="store_true", help="print the headline numbers as JSON")
    args = parser.parse_args(argv)
    import bot

    report = measure(args.shared, args.eval)
    if args.json:
        print(json.dumps({**report.metrics(), "claims": dict(report.claims), "bot": str(Path(bot.__file__).parent)}, indent=2))
    else:
        print(f"prguide from {Path(bot.__file__).parent}\n")
        print(render(report))
    return 1 if report.misses() else 0


if __name__ == "__main__":
    raise SystemExit(main())
