"""How long the guide comment is, as a reader sees it: ``python bench/comment_length.py [FOLDER...]``.

For every corpus pull request (default: ``../shared/corpus/verl`` and ``verl-2026h1``)
the guide is built with the shipped default rules (as ``prguide guide`` does) and
measured two ways:

* **visible lines**: the non-empty lines a reader sees with every collapsed
  ``<details>`` block closed (its ``<summary>`` line counts, its body does not), the
  hidden marker comment not counted;
* **characters**: the whole comment, collapsed parts included.

Prints the median, 90th percentile and maximum of both, overall and by reading level,
and the targets of issue 20 (median visible lines <= 15, skim-level <= 8, median
characters no longer than before: 2,859).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import SHARED, median, percentile, table

FOLDERS = (SHARED / "corpus" / "verl", SHARED / "corpus" / "verl-2026h1")
_OPEN = re.compile(r"<details(?:\s[^>]*)?>", re.IGNORECASE)
_CLOSE = re.compile(r"</details>", re.IGNORECASE)
_SUMMARY = re.compile(r"<summary>.*?</summary>", re.IGNORECASE | re.DOTALL)
_MARKER = re.compile(r"^<!--.*-->$")


def visible_lines(markdown: str) -> list[str]:
    """The non-empty lines a reader sees with every ``<details>`` block closed.

    A block's ``<summary>`` stays visible (one line); everything else inside it, nested
    blocks included, is hidden. A line that is only an HTML comment (prguide's marker)
    is not visible either.
    """
    shown: list[str] = []
    depth = 0
    for raw in markdown.splitlines():
        line = raw.strip()
        if not line or _MARKER.match(line):
            continue
        opens, closes = len(_OPEN.findall(line)), len(_CLOSE.findall(line))
        if depth == 0 and opens:
            summary = _SUMMARY.search(line)
            shown.append(summary.group(0) if summary else "<details>")
        elif depth == 0:
            shown.append(line)
        depth = max(0, depth + opens - closes)
    return shown


def measure(paths: Iterable[Path], lang: str = "en") -> list[tuple[str, str, int, int]]:
    """``(pull request file, reading level, visible lines, characters)`` for every bundle."""
    from bot.engine.build import build_guide
    from bot.engine.rules import load_rules
    from bot.sources.bundle import load_bundle

    rules = load_rules([])
    rows = []
    for path in paths:
        guide = build_guide(load_bundle(path), rules, lang=lang)
        if guide.skipped:
            continue
        level = str(guide.data.get("reading_level"))
        rows.append((f"{path.parent.name}/{path.name}", level, len(visible_lines(guide.markdown)), len(guide.markdown)))
    return rows


def _stats(values: Sequence[int]) -> tuple[float, float, float]:
    return median(values), percentile(values, 90), max(values) if values else float("nan")


def report(rows: Sequence[tuple[str, str, int, int]]) -> str:
    """Markdown tables: visible lines and characters, overall and by reading level."""
    groups: dict[str, list[tuple[str, str, int, int]]] = {"all": list(rows)}
    for level in ("deep", "quick", "skim", "skip"):
        groups[level] = [r for r in rows if r[1] == level]
    out = []
    lines_rows, chars_rows = [], []
    for name, group in groups.items():
        if not group:
            continue
        lines_rows.append((name, len(group), *_stats([r[2] for r in group])))
        chars_rows.append((name, len(group), *_stats([r[3] for r in group])))
    out.append("Visible non-empty lines (collapsed blocks closed, marker not counted)\n")
    out.append(table(("level", "guides", "median", "p90", "max"), lines_rows))
    out.append("\nWhole comment, characters (collapsed parts included)\n")
    out.append(table(("level", "guides", "median", "p90", "max"), chars_rows))
    light = [r[2] for r in rows if r[1] in ("skim", "skip")]
    out.append(
        "\nTargets: median visible lines <= 15 (now {}), skim/skip-level max <= 8 (now {}), median characters <= 2,859 (now {})".format(
            median([r[2] for r in rows]), max(light) if light else "-", median([r[3] for r in rows])
        )
    )
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("folders", nargs="*", type=Path, default=list(FOLDERS))
    parser.add_argument("--lang", default="en", choices=("en", "zh"))
    args = parser.parse_args(argv)
    paths = [p for folder in args.folders for p in sorted(folder.glob("*.json"))]
    if not paths:
        print(f"no corpus bundles under {', '.join(map(str, args.folders))}", file=sys.stderr)
        return 1
    print(f"$ python bench/comment_length.py {' '.join(map(str, args.folders))} --lang {args.lang}\n")
    print(report(measure(paths, args.lang)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
