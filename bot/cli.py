"""The ``prguide`` command line.

``prguide guide``, ``history`` and ``rules check`` run the engine offline;
``serve`` runs the GitHub App; ``sandbox`` a local GitHub API emulator; ``demo``
both, end to end; ``view`` the tag view over a guide database.
Heavy modules are imported inside each command so ``prguide --help`` stays fast.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from bot import __version__


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code (0 ok, 1 failure, 2 usage)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except (ValueError, OSError) as exc:
        print(f"prguide: {exc}", file=sys.stderr)
        return 1


def build_parser() -> argparse.ArgumentParser:
    """The argparse tree of every ``prguide`` command."""
    parser = argparse.ArgumentParser(prog="prguide", description="Reading guides and labels for merged pull requests.")
    parser.add_argument("--version", action="version", version=f"prguide {__version__}")
    sub = parser.add_subparsers(metavar="COMMAND")

    guide = sub.add_parser("guide", help="write the reading guide for a PR bundle file (or every bundle in a folder)")
    guide.add_argument("bundle", nargs="?", type=Path, help='a bundle JSON file: {"pull", "files", "reviews", "review_comments"}')
    guide.add_argument("--all", type=Path, metavar="DIR", help="one summary line per bundle in DIR")
    _engine_options(guide)
    guide.add_argument("--db", type=Path, help="also store the guides in this tag-view database")
    guide.add_argument("--public", action="store_true", help="with --db: mark the repository public in the tag view")
    guide.set_defaults(func=_cmd_guide)

    history = sub.add_parser("history", help="guides for the last merged PRs of a local git repository")
    history.add_argument("--repo", type=Path, default=Path("."), help="a git repository, working or bare (default: .)")
    history.add_argument("--last", type=int, default=10, metavar="N", help="how many merged PRs (default 10)")
    history.add_argument("--repository", metavar="OWNER/NAME", help="the GitHub name (default: from remote.origin.url)")
    history.add_argument("--out", type=Path, metavar="DIR", help="write one file per PR into DIR instead of stdout")
    history.add_argument("--db", type=Path, help="also store the guides in this tag-view database")
    history.add_argument("--public", action="store_true", help="with --db: mark the repository public in the tag view")
    _engine_options(history)
    history.set_defaults(func=_cmd_history)

    rules = sub.add_parser("rules", help="work with rule files")
    rules_sub = rules.add_subparsers(metavar="ACTION")
    check = rules_sub.add_parser("check", help="validate rule files; exit 1 on any problem")
    check.add_argument("paths", nargs="+", type=Path, help="rule files or folders")
    check.set_defaults(func=_cmd_rules_check)

    serve = sub.add_parser("serve", help="run the GitHub App webhook server (settings from the environment)")
    serve.set_defaults(func=_cmd_serve)

    _optional_subcommand(sub, "sandbox", "run a local GitHub API emulator", "bot.sandbox.cli")
    _optional_subcommand(sub, "view", "serve or export the tag view of a guide database", "bot.tagview.cli")
    _optional_subcommand(sub, "demo", "run the sandbox and the app end to end on a real merged PR", "bot.demo")
    return parser


def _engine_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rules", action="append", type=Path, default=[], metavar="FILE_OR_DIR", help="extra rule files (repeatable)")
    p.add_argument("--no-default-rules", action="store_true", help="leave out the shipped rules in config/rules")
    p.add_argument("--lang", choices=("en", "zh"), default="en", help="language of the guide (default en)")
    p.add_argument("--format", choices=("markdown", "json"), default="markdown", help="output format (default markdown)")


def _optional_subcommand(sub, name: str, help_text: str, module: str) -> None:
    import importlib

    p = sub.add_parser(name, help=help_text)
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - only while a feature is being built
        p.set_defaults(func=lambda args, exc=exc: _unavailable(name, exc))
        return
    mod.add_arguments(p)
    runner = getattr(mod, "run_cli", None) or mod.run
    if inspect.iscoroutinefunction(runner):
        p.set_defaults(func=lambda args: asyncio.run(runner(args)))
    else:
        p.set_defaults(func=runner)


def _unavailable(name: str, exc: Exception) -> int:  # pragma: no cover
    print(f"prguide {name}: not available ({exc})", file=sys.stderr)
    return 1


def _load_rules(args: argparse.Namespace):
    from bot.rules import load_rules

    return load_rules(args.rules, defaults=not args.no_default_rules)


def _cmd_guide(args: argparse.Namespace) -> int:
    from bot.engine import build_guide
    from bot.rules import RuleError
    from bot.sources.bundle import BundleError, load_bundle

    try:
        rules = _load_rules(args)
    except RuleError as exc:
        print(exc, file=sys.stderr)
        return 1
    if args.all and args.bundle:
        print("prguide guide: give a BUNDLE file or --all DIR, not both", file=sys.stderr)
        return 2
    if args.all:
        if not args.all.is_dir():
            print(f"prguide guide: {args.all} is not a folder", file=sys.stderr)
            return 1
        results, failed = [], 0
        snapshots = []
        for path in sorted(args.all.glob("*.json")):
            try:
                snapshots.append(load_bundle(path))
            except BundleError as exc:  # one bad file must not hide the good ones
                print(f"prguide guide: {exc}", file=sys.stderr)
                failed += 1
        for snapshot in sorted(snapshots, key=lambda s: s.number):
            guide = build_guide(snapshot, rules, lang=args.lang)
            results.append(guide)
            if args.format == "json":
                continue
            d = guide.data
            labels = ",".join(d["labels"]) or "-"
            print(f"#{d['number']}\t{d['importance']:>2}/10\t{d['reading_level']:<5}\t{d['reading_minutes']:>4} min\t{labels}")
        if args.format == "json":
            print(json.dumps([g.data for g in results], ensure_ascii=False, indent=2))
        _store(args, results)
        return 1 if failed else 0
    if not args.bundle:
        print("prguide guide: give a BUNDLE file or --all DIR", file=sys.stderr)
        return 2
    guide = build_guide(load_bundle(args.bundle), rules, lang=args.lang)
    _emit(guide, args.format)
    _store(args, [guide])
    return 0


def _cmd_history(args: argparse.Namespace) -> int:
    from bot.engine import build_guide
    from bot.rules import RuleError
    from bot.sources.gitrepo import GitRepositoryError, load_merged_pull_requests

    try:
        rules = _load_rules(args)
        snapshots = load_merged_pull_requests(args.repo, last=args.last, repository=args.repository)
    except (RuleError, GitRepositoryError) as exc:
        print(f"prguide history: {exc}", file=sys.stderr)
        return 1
    if not snapshots:
        print(f"prguide history: no merged pull requests found in {args.repo}", file=sys.stderr)
        return 1
    guides = [build_guide(snapshot, rules, lang=args.lang) for snapshot in _progress(snapshots, "guides")]
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        suffix = "json" if args.format == "json" else "md"
        for g in guides:
            body = json.dumps(g.data, ensure_ascii=False, indent=2) if args.format == "json" else g.markdown
            (args.out / f"{g.number}.{suffix}").write_text(body, encoding="utf-8")
        print(f"wrote {len(guides)} guides to {args.out}", file=sys.stderr)
    elif args.format == "json":
        print(json.dumps([g.data for g in guides], ensure_ascii=False, indent=2))
    else:
        print("\n\n---\n\n".join(g.markdown for g in guides))
    _store(args, guides)
    return 0


def _progress(items, unit: str):
    """A progress bar on a terminal (stderr), nothing when piped."""
    if not sys.stderr.isatty():
        return items
    from tqdm import tqdm

    return tqdm(items, unit=f" {unit}", file=sys.stderr)


def _emit(guide, fmt: str) -> None:
    if fmt == "json":
        print(json.dumps(guide.data, ensure_ascii=False, indent=2))
    else:
        sys.stdout.write(guide.markdown)


def _store(args: argparse.Namespace, guides) -> None:
    if not getattr(args, "db", None):
        return
    from bot.tagview.store import GuideStore

    store = GuideStore(args.db)
    try:
        for g in guides:
            store.save(
                g.data,
                # Offline sources cannot tell whether a repository is private: assume it is unless told.
                visibility="public" if args.public else None,
                label_descriptions={name: spec.description for name, spec in g.label_specs.items()},
            )
    finally:
        close = getattr(store, "close", None)
        if close:
            close()
    print(f"stored {len(guides)} guides in {args.db}", file=sys.stderr)


def _cmd_rules_check(args: argparse.Namespace) -> int:
    from bot.rules import check_rule_paths

    problems = check_rule_paths(args.paths)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} problem(s) found", file=sys.stderr)
        return 1
    print(f"ok: {', '.join(str(p) for p in args.paths)}")
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    from bot.app.server import run
    from bot.app.settings import Settings, SettingsError

    try:
        settings = Settings.from_env()
    except SettingsError as exc:
        print(f"prguide serve: {exc}", file=sys.stderr)
        return 2
    run(settings)
    return 0
