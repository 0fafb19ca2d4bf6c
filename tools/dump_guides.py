"""Write every guide of a corpus to a folder, so that two versions of the engine can be diffed.

For each bundle ``*.json`` under the given folders, and for each rule set (the shipped
rules alone, and the shipped rules plus ``config/examples/verl.yml``), the guide is built
in English and in Chinese and written as Markdown (the comment body), as JSON (what
``prguide guide --format json`` prints) and as a small "meta" file with what the comment
does not show (labels with their specs, the marker state, the numbered focus points,
the rules that held and why).

    python tools/dump_guides.py OUT_DIR CORPUS_DIR [CORPUS_DIR ...] [--synthetic 3000]

Then ``diff -r OLD_OUT NEW_OUT`` says whether a change moved any byte. Exit status 0
when every guide was written, 1 (one line on stderr) otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_RULES = ROOT / "config" / "examples" / "verl.yml"


def _meta(guide) -> str:
    """What a guide carries beside its Markdown and JSON, as stable text."""
    lines = [f"labels: {list(guide.labels)}", f"skipped: {guide.skipped}", f"state: {guide.state!r}"]
    lines += [f"spec: {name}: {spec!r}" for name, spec in sorted(guide.label_specs.items())]
    lines += [f"focus: {point!r}" for point in guide.focus]
    # What ``/prguide why`` says: each rule that held and why, in both languages.
    from bot.engine.rules.reasons import in_language

    for hit in guide.classification.hits if guide.classification else ():
        lines.append(f"hit: {hit!r}")
        lines += [f"  why: {in_language(r, 'en')} | {in_language(r, 'zh')} | {getattr(r, 'params', None)!r}" for r in hit.reasons]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Build and write every guide; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("out", type=Path, help="folder to write into (created)")
    parser.add_argument("corpus", type=Path, nargs="+", help="folders of bundle *.json files")
    parser.add_argument("--synthetic", type=int, default=0, metavar="FILES",
                        help="also the synthetic pull request of bench/guide_speed.py with this many files")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from bot.engine.build import build_guide
    from bot.engine.rules import load_rules
    from bot.sources.bundle import BundleError, load_bundle

    rule_sets = {"shipped": load_rules([]), "verl": load_rules([EXAMPLE_RULES])}
    written = 0
    for folder in args.corpus:
        if not folder.is_dir():
            print(f"dump_guides: {folder} is not a folder", file=sys.stderr)
            return 1
        for path in sorted(folder.glob("*.json")):
            try:
                snapshot = load_bundle(path)
            except BundleError as exc:
                print(f"dump_guides: {exc}", file=sys.stderr)
                return 1
            for rules_name, rules in rule_sets.items():
                target = args.out / folder.name / rules_name
                target.mkdir(parents=True, exist_ok=True)
                for lang in ("en", "zh"):
                    guide = build_guide(snapshot, rules, lang=lang)
                    stem = target / f"{path.stem}.{lang}"
                    Path(f"{stem}.md").write_text(guide.markdown, encoding="utf-8")
                    Path(f"{stem}.json").write_text(json.dumps(guide.data, ensure_ascii=False, indent=2), encoding="utf-8")
                    Path(f"{stem}.meta").write_text(_meta(guide), encoding="utf-8")
                    written += 1
    if args.synthetic:
        sys.path.insert(0, str(ROOT / "bench"))
        from guide_speed import synthetic_files, synthetic_pull

        from bot.engine.snapshot import PullRequestSnapshot

        files = synthetic_files(args.synthetic)
        snapshot = PullRequestSnapshot.from_github(synthetic_pull(files), files, [], [], repository="bench/verl")
        target = args.out / "synthetic"
        target.mkdir(parents=True, exist_ok=True)
        for lang in ("en", "zh"):
            guide = build_guide(snapshot, rule_sets["verl"], lang=lang)
            stem = target / f"{args.synthetic}.{lang}"
            Path(f"{stem}.md").write_text(guide.markdown, encoding="utf-8")
            Path(f"{stem}.json").write_text(json.dumps(guide.data, ensure_ascii=False, indent=2), encoding="utf-8")
            Path(f"{stem}.meta").write_text(_meta(guide), encoding="utf-8")
            written += 1
    print(f"wrote {written} guides to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
