"""Claim precision: how many of the statements prguide's guides make are exactly true, by kind.

The labels live in ``tests/data/claim_audit/`` (one ``NAME.json`` per set): sets of pull requests whose
guides were rated blind, statement by statement, as ``true``, ``vague`` (true but
imprecise) or ``misleading``, by a rater reading as a maintainer of the corpus project
(``../shared/reference/judgement-rubric.md``). Precision of a kind = true / all
statements of that kind (vague counts against it). A kind ships at >= 95 %.

Two views per set:

* **as rated**: the statements of the guides the raters saw (the engine of that day),
  with the rubric's per-guide summary (guides with a misleading statement, misleading
  statements per guide, focus helpfulness, summaries that say what changed);
* **now**: the guides of the same pull requests built by this checkout, their
  statements (the JSON ``claims`` when the engine has them, else the Markdown's
  sentences) matched to the labels by their text. A statement nobody rated is counted
  as *unrated*: precision is only known for what was rated, so a set whose statements
  changed needs a new blind rating (a new set), never a re-rating by the same eyes.

    python bench/claim_precision.py [--set NAME] [--json]

The corpus is read from ``../shared`` beside the project root or ``$PRGUIDE_SHARED``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # runnable from a checkout without installing prguide
    sys.path.insert(0, str(ROOT))

SHARED = Path(os.environ.get("PRGUIDE_SHARED", ROOT.parent / "shared"))
LABELS = ROOT / "tests" / "data" / "claim_audit"
#: A kind ships only at this measured precision.
TARGET = 0.95
LABEL_VALUES = ("true", "vague", "misleading")

#: Markdown sections of the guide and the statement kind their lines are (engines without a claim ledger).
_SECTION_KINDS = {
    "What to focus on": "focus",
    "Tests": "tests",
    "Follow-ups": "follow_up",
    "Why this score": "score_factor",
    "Breaking changes": "breaking",
    "Review highlights": "review",
    "Dependencies": "dependencies",
}
#: Sections whose lines are not statements about the pull request (tables, label provenance).
_NOT_STATEMENTS = ("What changed", "Labels")


def normalise(text: str) -> str:
    """A statement's text for matching: no list numbering or bullet, no Markdown emphasis or code
    spans (the ledger's claims are plain text), single spaces."""
    text = re.sub(r"^\s*(?:\d+\.|[-*])\s+", "", text)
    text = text.replace("**", "").replace("\\", "").replace("`", "")
    return " ".join(text.split()).casefold()


def markdown_statements(markdown: str) -> list[dict[str, str]]:
    """The statements of a rendered guide: ``[{"kind", "text"}]`` in order.

    Each bullet, numbered point or paragraph line outside tables, headings, the marker,
    the footer and the label list is one statement; a line broken with a trailing
    backslash is several. The fixed explanation of the score formula is not a statement.
    """
    out: list[dict[str, str]] = []
    section = "top"
    for line in markdown.splitlines():
        s = line.strip()
        if not s or s.startswith(("<!--", "|", "<sub>", "</details>", "### ", "Title:")):
            continue
        if s.startswith("#### "):
            section = s[5:].strip()
            continue
        summary = re.match(r"<details><summary>(.*?)</summary>", s)
        if summary:
            if "Why this score" in summary.group(1):
                section = "Why this score"
            continue
        if section in _NOT_STATEMENTS:
            continue
        if section == "Why this score" and (s.startswith("- Importance is 1 + reach") or "every merged PR starts at 1" in s):
            continue
        kind = _SECTION_KINDS.get(section, section)
        if section == "top":
            if s.startswith("**") and "importance" in s:
                kind = "verdict"
            elif s.startswith(("**Breaking", "**⚠")):
                kind = "breaking"
            elif s.startswith(("For ", "适合")):
                kind = "audience"
            elif s.startswith("Mostly because"):
                kind = "verdict_reasons"
            elif s.startswith("**"):
                kind = "summary"
            else:
                kind = "top"
        out.extend({"kind": kind, "text": part.strip()} for part in s.split("\\") if part.strip())
    return out


def guide_statements(data: Mapping[str, Any]) -> list[dict[str, str]]:
    """The statements of a guide's JSON form: its ``claims`` (kind and text) when the engine has a ledger."""
    claims = data.get("claims")
    if isinstance(claims, list) and claims:
        return [{"kind": str(c.get("kind", "")), "text": str(c.get("text", ""))} for c in claims]
    return markdown_statements(str(data.get("markdown", "")))


def precision_table(rows: Iterable[tuple[str, str]]) -> dict[str, dict[str, Any]]:
    """``(kind, label)`` pairs -> ``{kind: {"n", "true", "vague", "misleading", "precision"}}``, kinds sorted."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for kind, label in rows:
        counts[kind][label] += 1
    table = {}
    for kind in sorted(counts):
        c = counts[kind]
        n = sum(c.values())
        table[kind] = {"n": n, **{v: c[v] for v in LABEL_VALUES}, "precision": c["true"] / n if n else 0.0}
    return table


def rubric_summary(prs: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The per-guide rubric over a set: guides, share with a misleading statement, misleading per guide,
    mean helpfulness, summaries yes/partly/no, verdicts."""
    misleading = [sum(1 for s in pr["statements"] if s["label"] == "misleading") for pr in prs.values()]
    helpful = [pr["helpfulness"] for pr in prs.values() if isinstance(pr.get("helpfulness"), int | float)]
    n = len(prs)
    return {
        "guides": n,
        "with_misleading": sum(1 for m in misleading if m),
        "without_misleading_share": (sum(1 for m in misleading if not m) / n) if n else 0.0,
        "misleading_per_guide": (sum(misleading) / n) if n else 0.0,
        "helpfulness": (sum(helpful) / len(helpful)) if helpful else 0.0,
        "summary": dict(Counter(str(pr.get("summary_ok")) for pr in prs.values())),
        "verdict": dict(Counter(str(pr.get("verdict_ok")) for pr in prs.values())),
    }


def as_rated(prs: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Precision by kind of the statements as the raters saw them."""
    return precision_table((s["kind"], s["label"]) for pr in prs.values() for s in pr["statements"])


def now(prs: Mapping[str, Mapping[str, Any]], build: Any) -> tuple[dict[str, dict[str, Any]], Counter]:
    """Precision by kind of this checkout's statements that a rater labelled, and the unrated ones by kind.

    ``build(ref)`` returns a guide's JSON data for a corpus path ``FOLDER/NUMBER``, or None to skip it.
    """
    rows: list[tuple[str, str]] = []
    unrated: Counter = Counter()
    for ref, pr in prs.items():
        data = build(ref)
        if data is None:
            continue
        labels = {normalise(s["text"]): s["label"] for s in pr["statements"]}
        for statement in guide_statements(data):
            label = labels.get(normalise(statement["text"]))
            if label is None:
                unrated[statement["kind"]] += 1
            else:
                rows.append((statement["kind"], label))
    return precision_table(rows), unrated


def corpus_builder(shared: Path):
    """A ``build(ref)`` for :func:`now`: the English guide of ``shared/corpus/REF.json`` with the shipped rules."""
    from bot.engine.build import build_guide
    from bot.engine.rules import load_rules
    from bot.sources.bundle import load_bundle

    rules = load_rules([], defaults=True)

    def build(ref: str) -> Mapping[str, Any] | None:
        path = shared / "corpus" / f"{ref}.json"
        if not path.is_file():
            return None
        return build_guide(load_bundle(path), rules, lang="en").data

    return build


def _print_table(title: str, table: Mapping[str, Mapping[str, Any]]) -> None:
    print(f"\n{title}\n")
    print("| kind | statements | true | vague | misleading | precision | ships (>= 95 %) |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for kind, row in table.items():
        ok = "yes" if row["precision"] >= TARGET else "no"
        print(f"| {kind} | {row['n']} | {row['true']} | {row['vague']} | {row['misleading']} | {row['precision']:.2f} | {ok} |")
    total = precision_table((k, label) for k, row in table.items() for label in LABEL_VALUES for _ in range(row[label]))
    n = sum(r["n"] for r in total.values())
    true = sum(r["true"] for r in total.values())
    if n:
        print(f"| **all** | {n} | {true} | | | {true / n:.2f} | |")


def load_sets(folder: Path) -> dict[str, dict[str, Any]]:
    """The audit sets of ``folder``: ``{name: {"rated_on", "engine", "raters", "sampling", "prs"}}``,
    one ``NAME.json`` each, in name order (which is the order they were rated in)."""
    return {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in sorted(folder.glob("*.json"))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", dest="only", help="one set of tests/data/claim_audit/ (default: every set)")
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    sets = load_sets(args.labels)
    if args.only:
        if args.only not in sets:
            print(f"claim_precision: no set {args.only!r} in {args.labels} (sets: {', '.join(sets)})", file=sys.stderr)
            return 2
        sets = {args.only: sets[args.only]}
    build = corpus_builder(SHARED) if (SHARED / "corpus").is_dir() else None
    report: dict[str, Any] = {}
    for name, entry in sets.items():
        prs = entry["prs"]
        item: dict[str, Any] = {"engine": entry.get("engine"), "rubric": rubric_summary(prs), "as_rated": as_rated(prs)}
        if build is not None:
            table, unrated = now(prs, build)
            item["now"], item["now_unrated"] = table, dict(unrated)
        report[name] = item
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    for name, item in report.items():
        r = item["rubric"]
        print(f"## {name} (rated on engine {item['engine']})\n")
        if sets[name].get("scope") == "kind":
            # One claim kind audited statement by statement: no whole-guide rubric to report.
            print(f"- one claim kind, {sum(len(pr['statements']) for pr in sets[name]['prs'].values())} statements on "
                  f"{r['guides']} pull requests, each labelled from its diff")
        else:
            print(f"- guides: {r['guides']}; with a misleading statement: {r['with_misleading']} "
                  f"({1 - r['without_misleading_share']:.0%}); misleading per guide: {r['misleading_per_guide']:.2f}")
            print(f"- focus helpfulness (0-3): {r['helpfulness']:.2f}; summaries: {r['summary']}; verdicts: {r['verdict']}")
        _print_table("As rated:", item["as_rated"])
        if "now" in item:
            _print_table("This checkout, statements a rater labelled:", item["now"])
            unrated = item["now_unrated"]
            print(f"\nUnrated statements of this checkout (need a new blind set): {sum(unrated.values())} "
                  + (f"({', '.join(f'{k} {v}' for k, v in sorted(unrated.items()))})" if unrated else ""))
        else:
            print(f"\n(corpus not found under {SHARED}: only the labels as rated)")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
