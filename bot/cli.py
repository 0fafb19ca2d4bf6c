"""The ``prguide`` command line.

``prguide guide``, ``history`` and ``rules check`` run the engine offline;
``serve`` runs the GitHub App; ``sandbox`` a local GitHub API emulator; ``demo``
both, end to end; ``send`` one webhook delivery to a running server; ``view`` the tag
view over a guide database.
Heavy modules are imported inside each command so ``prguide --help`` stays fast.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path

from bot import __version__


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code (0 ok, 1 failure, 2 usage).

    Every error is one line on stderr (``prguide COMMAND: message``), never a traceback
    (unless ``PRGUIDE_TRACEBACK`` is set and the error is a bug, not a bad input).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(only=_command_named(argv))
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    prog = f"prguide {args.command}" if getattr(args, "command", None) else "prguide"
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except (ValueError, OSError, sqlite3.Error) as exc:
        print(f"{prog}: {one_line(exc)}", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - a command line prints one line, never a traceback
        if os.environ.get("PRGUIDE_TRACEBACK"):
            raise  # for whoever debugs it
        print(
            f"{prog}: internal error ({type(exc).__name__}: {one_line(exc)}); please report it "
            "(PRGUIDE_TRACEBACK=1 shows where it happened)",
            file=sys.stderr,
        )
        return 1


def one_line(exc: BaseException) -> str:
    """``exc`` as one line: ``FILE: reason`` for an :class:`OSError` that names a file, else its text."""
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        text = f"{exc.filename}: {exc.strerror}"
    else:
        text = str(exc) or type(exc).__name__
    return "; ".join(part.strip(" -") for part in text.splitlines() if part.strip(" -"))


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line (the usage itself is one ``--help`` away)."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: {message} (see '{self.prog} --help')\n")


#: Commands whose modules bring their own arguments (and heavy imports: aiohttp, jwt...).
OPTIONAL_COMMANDS = (
    ("sandbox", "run a local GitHub API emulator", "bot.sandbox.cli"),
    ("view", "serve or export the tag view of a guide database", "bot.tagview.cli"),
    ("demo", "run the sandbox and the app end to end on a real merged PR", "bot.demo"),
    ("send", "send a signed webhook delivery to a prguide server and show how it ended", "bot.send"),
    ("db", "manage the PostgreSQL database (PRGUIDE_DATABASE_URL)", "bot.dbcli"),
)


def _command_named(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs (its first word that is not an option), or ``None``."""
    return next((word for word in argv if not word.startswith("-")), None)


def build_parser(only: str | None = "") -> argparse.ArgumentParser:
    """The argparse tree of every ``prguide`` command.

    ``only``: the command about to run. The modules of the other optional commands
    (:data:`OPTIONAL_COMMANDS`) are then not imported: their commands are listed by
    ``--help`` but have no arguments (importing the sandbox's alone took a fifth of a
    second of CPU on every ``prguide history``). ``None`` imports none of them; the
    default ``""`` imports them all.
    """
    parser = _Parser(prog="prguide", description="Reading guides and labels for merged pull requests.")
    parser.add_argument("--version", action="version", version=f"prguide {__version__}")
    sub = parser.add_subparsers(metavar="COMMAND")

    guide = sub.add_parser("guide", help="write the reading guide for a PR bundle file (or every bundle in a folder)")
    guide.add_argument("bundle", nargs="?", type=Path, help='a bundle JSON file: {"pull", "files", "reviews", "review_comments"}')
    guide.add_argument("--all", type=Path, metavar="DIR", help="one summary line per bundle in DIR")
    guide.add_argument(
        "--repo", type=Path, metavar="CLONE",
        help="a local clone of the repository: its merged history names the pull request each fix's changed lines came from, and the files that usually change together",
    )  # fmt: skip
    _engine_options(guide)
    guide.add_argument("--db", type=Path, help="also store the guides in this tag-view database")
    guide.add_argument("--public", action="store_true", help="with --db: mark the repository public in the tag view")
    guide.set_defaults(func=_cmd_guide, command="guide")

    history = sub.add_parser("history", help="guides for the last merged PRs of a local git repository")
    history.add_argument("--repo", type=Path, default=Path("."), help="a git repository, working or bare (default: .)")
    history.add_argument("--last", type=_at_least_one, default=10, metavar="N", help="how many merged PRs (default 10)")
    history.add_argument(
        "--repository", metavar="OWNER/NAME",
        help="the GitHub name, for links in the guides (default: from remote.origin.url)",
    )  # fmt: skip
    history.add_argument("--out", type=Path, metavar="DIR", help="write one file per PR into DIR instead of stdout")
    history.add_argument("--db", type=Path, help="also store the guides in this tag-view database")
    history.add_argument("--public", action="store_true", help="with --db: mark the repository public in the tag view")
    history.add_argument(
        "--no-history", action="store_true",
        help="do not blame the changed lines (no \"fixes code from #N\" lines)",
    )  # fmt: skip
    history.add_argument("--jobs", type=_at_least_one, metavar="N", help="processes building guides (default: one per core)")
    _engine_options(history)
    history.set_defaults(func=_cmd_history, command="history")

    rules = sub.add_parser("rules", help="work with rule files")
    rules_sub = rules.add_subparsers(metavar="ACTION")
    check = rules_sub.add_parser("check", help="validate rule files; exit 1 on any problem")
    check.add_argument("paths", nargs="+", type=Path, help="rule files or folders")
    check.set_defaults(func=_cmd_rules_check, command="rules check")

    serve = sub.add_parser("serve", help="run the GitHub App webhook server (settings from the environment)")
    serve.add_argument(
        "--role", choices=("all", "web", "worker"),
        help="web: take deliveries and serve the tag view; worker: run jobs; all: both (default $PRGUIDE_ROLE or all)",
    )
    serve.set_defaults(func=_cmd_serve, command="serve")

    for name, help_text, module in OPTIONAL_COMMANDS:
        if only == "" or only == name:
            _optional_subcommand(sub, name, help_text, module)
        else:
            sub.add_parser(name, help=help_text).set_defaults(command=name)
    return parser


def _at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"N must be 1 or more, got {value}")
    return value


def _engine_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rules", action="append", type=Path, default=[], metavar="FILE_OR_DIR", help="extra rule files (repeatable)")
    p.add_argument("--no-default-rules", action="store_true", help="leave out the shipped rules in config/rules")
    p.add_argument("--lang", choices=("en", "zh"), default="en", help="language of the guide (default en)")
    p.add_argument("--format", choices=("markdown", "json"), default="markdown", help="output format (default markdown)")
    p.add_argument(
        "--narrator", metavar="URL",
        help="narrate with this OpenAI-compatible server (default: $PRGUIDE_LLM_URL; key $PRGUIDE_LLM_API_KEY)",
    )  # fmt: skip
    p.add_argument("--model", metavar="NAME", help="the narrator's model on that server (default: $PRGUIDE_LLM_MODEL)")


def _optional_subcommand(sub, name: str, help_text: str, module: str) -> None:
    import asyncio
    import importlib
    import inspect

    p = sub.add_parser(name, help=help_text)
    p.set_defaults(command=name)
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
    from bot.engine.rules import load_rules

    return load_rules(args.rules, defaults=not args.no_default_rules)


def _cmd_guide(args: argparse.Namespace) -> int:
    from bot.engine.build import build_guide
    from bot.guide_pool import with_follow_ups
    from bot.engine.rules import RuleError
    from bot.sources.bundle import BundleError
    from bot.sources.gitrun import GitRepositoryError

    try:
        rules = _load_rules(args)
    except RuleError as exc:
        print(exc, file=sys.stderr)
        return 1
    if args.all and args.bundle:
        print("prguide guide: give a BUNDLE file or --all DIR, not both", file=sys.stderr)
        return 2
    if not args.all and not args.bundle:
        print("prguide guide: give a BUNDLE file or --all DIR", file=sys.stderr)
        return 2
    if args.all and not args.all.is_dir():
        print(f"prguide guide: {args.all} is not a folder", file=sys.stderr)
        return 1
    if args.bundle and not args.bundle.is_file():
        what = "is a folder (use --all DIR for every bundle in it)" if args.bundle.is_dir() else "no such file"
        print(f"prguide guide: {args.bundle}: {what}", file=sys.stderr)
        return 1
    clone = _open_clone(args)  # before the work too
    if clone is _FAILED:
        return 1
    try:
        coupling = _coupling(args.repo) if clone is not None else None
    except (GitRepositoryError, ValueError) as exc:
        print(f"prguide guide: {exc}", file=sys.stderr)
        return 1
    store = _open_store(args)  # before the work, so a bad --db costs nothing
    try:
        if args.all:
            results, failed = [], 0
            bundles = []
            for path in sorted(args.all.glob("*.json")):
                try:
                    bundles.append(_read_bundle(path))
                except BundleError as exc:  # one bad file must not hide the good ones
                    print(f"prguide guide: {exc}", file=sys.stderr)
                    failed += 1
            bundles.sort(key=lambda b: b[0].number)
            blames = _history_of(clone, bundles)
            built = [build_guide(snapshot, rules, lang=args.lang, history=coupling, blame=blames.get(snapshot.number))
                     for snapshot, _base in bundles]  # fmt: skip
            # "Follows #N" from the definitions both changed: the clone's history learns them from the guides.
            for guide in with_follow_ups([s for s, _ in bundles], built, rules, lang=args.lang, history=coupling, blames=blames):
                results.append(guide)
                if args.format == "json":
                    continue
                d = guide.data
                labels = ",".join(d["labels"]) or "-"
                print(f"#{d['number']}\t{d['importance']:>2}/10\t{d['reading_level']:<5}\t{d['reading_minutes']:>4} min\t{labels}")
            if args.format == "json":
                results = _narrated(args, results)
                print(json.dumps([g.data for g in results], ensure_ascii=False, indent=2))
            _store(args, store, results)
            return 1 if failed else 0
        snapshot, base = _read_bundle(args.bundle)
        blames = _history_of(clone, [(snapshot, base)])
        (guide,) = _narrated(args, [build_guide(snapshot, rules, lang=args.lang, history=coupling, blame=blames.get(snapshot.number))])
        _emit(guide, args.format)
        _store(args, store, [guide])
        return 0
    finally:
        if store is not None:
            store.close()


def _cmd_history(args: argparse.Namespace) -> int:
    from bot.engine.rules import RuleError
    from bot.guide_pool import build_guides, with_follow_ups
    from bot.sources.bundle import snapshot_from_bundle
    from bot.sources.gitrepo import GitRepositoryError, find_history, repository_name, why_no_pull_requests

    try:
        rules = _load_rules(args)
        named = repository_name(args.repo, args.repository)
    except (RuleError, GitRepositoryError) as exc:
        print(f"prguide history: {exc}", file=sys.stderr)
        return 1
    if args.out is not None:
        # Before the work: finding out after every guide is built wastes the run.
        if args.out.exists() and not args.out.is_dir():
            print(f"prguide history: --out {args.out} is a file, not a folder", file=sys.stderr)
            return 1
        args.out.mkdir(parents=True, exist_ok=True)
    store = _open_store(args)
    if not named.on_github:
        if named.origin:
            why = f"its origin remote ({named.origin}) is not on github.com"
        else:
            why = "it has no 'origin' remote"
        print(
            f"prguide history: warning: {args.repo}: {why}, so the guides are stored as {named.name} "
            "and link nowhere; pass --repository OWNER/NAME to name the GitHub repository",
            file=sys.stderr,
        )
    try:
        with _PhaseProgress() as progress:
            try:
                found = find_history(args.repo, last=args.last, repository=args.repository, progress=progress)
                if not len(found):
                    why = why_no_pull_requests(args.repo, repository=args.repository)
                    print(f"prguide history: {args.repo}: {why}", file=sys.stderr)
                    return 1
                coupling = _coupling(args.repo)
                blames: dict = {}
                if args.no_history:
                    # The diffs stream in while the guides are built (on every core).
                    snapshots = found.snapshots(args.repo, progress, first_apart=True)
                else:
                    # Blame needs every pull request's base first: the diffs are read, then blamed.
                    bundles = list(found.bundles(progress))
                    snapshots = [snapshot_from_bundle(b, f"{args.repo}@{b['_meta']['commit']}") for b in bundles]
                    progress("links", 0, len(bundles))
                    blames = _history_or_warn("history", args.repo, [(s, b["pull"]["base"]["sha"]) for s, b in zip(snapshots, bundles)])
                    progress("links", len(bundles), len(bundles))
                guides = build_guides(
                    snapshots, rules, lang=args.lang, jobs=args.jobs, total=len(found), history=coupling, blames=blames,
                    languages=args.db is not None,
                    progress=lambda done, total: progress("guides", done, total),
                )
                if not args.no_history:
                    # "Follows #N" from the definitions both changed, known once each guide is built.
                    guides = with_follow_ups(snapshots, guides, rules, lang=args.lang, history=coupling, blames=blames)
            except GitRepositoryError as exc:
                print(f"prguide history: {exc}", file=sys.stderr)
                return 1
        guides = _narrated(args, guides)
        if args.out:
            suffix = "json" if args.format == "json" else "md"
            for g in guides:
                body = json.dumps(g.data, ensure_ascii=False, indent=2) if args.format == "json" else g.markdown
                (args.out / f"{g.number}.{suffix}").write_text(body, encoding="utf-8")
            print(f"wrote {len(guides)} guides to {args.out}", file=sys.stderr)
        elif args.format == "json":
            print(json.dumps([g.data for g in guides], ensure_ascii=False, indent=2))
        else:
            print("\n\n---\n\n".join(g.markdown for g in guides))
        _store(args, store, guides)
        return 0
    finally:
        if store is not None:
            store.close()


def _coupling(repo: Path):
    """The merged history of the clone ``repo`` for change coupling, calibrated on itself
    (:func:`bot.engine.history.coupling.calibrate`; about two seconds for 3,000 pull
    requests). Raises :class:`bot.sources.gitrun.GitRepositoryError` as reading it does."""
    from bot.engine.history.coupling import calibrate
    from bot.sources.gitfiles import merged_changes

    return calibrate(merged_changes(repo))


_FAILED = object()


def _open_clone(args: argparse.Namespace):
    """``--repo``'s repository (``None`` without one); prints why and returns ``_FAILED`` when it is not one."""
    if getattr(args, "repo", None) is None:
        return None
    from bot.sources.gitrun import GitRepositoryError, open_repository

    try:
        return open_repository(args.repo)
    except GitRepositoryError as exc:
        print(f"prguide {args.command}: --repo {exc}", file=sys.stderr)
        return _FAILED


def _read_bundle(path: Path):
    """``(snapshot, base)``: a bundle file's snapshot and, for one rebuilt from git
    (``_meta.source == "git"``), the commit before it (else ``None``: found from
    ``merge_commit_sha`` when a clone is given). Raises ``BundleError``."""
    from bot.sources.bundle import read_bundle, snapshot_from_bundle

    data = read_bundle(path)
    meta = data.get("_meta") if isinstance(data.get("_meta"), dict) else {}
    base = ((data["pull"].get("base") or {}).get("sha") if meta.get("source") == "git" else None) or None
    return snapshot_from_bundle(data, str(path)), base


def _history_of(clone, pulls) -> dict:
    """``{number: HistoryFacts}`` for ``(snapshot, base)`` pairs when a clone was given, else ``{}``."""
    if clone is None:
        return {}
    return _history_or_warn("guide", clone, pulls)


def _history_or_warn(command: str, repo, pulls) -> dict:
    """History facts for ``pulls``; when git fails, a one-line warning and none: the links
    are an extra, the guides are still worth having."""
    from bot.sources import githistory

    try:
        return githistory.history_facts(repo, pulls)
    except githistory.GitRepositoryError as exc:
        print(f"prguide {command}: warning: no history links ({one_line(exc)})", file=sys.stderr)
        return {}


class _PhaseProgress:
    """Progress bars on a terminal (stderr), one per phase; nothing when stderr is not a terminal.

    Called as ``progress(phase, done, total)`` (:data:`bot.sources.gitrepo.Progress`).
    """

    _DESCRIPTIONS = {"history": "reading history", "diffs": "reading diffs", "links": "blaming changed lines",
                     "guides": "building guides"}  # fmt: skip
    _UNITS = {"history": " PRs", "diffs": " PRs", "links": " PRs", "guides": " guides"}

    def __init__(self) -> None:
        self.bars: dict[str, object] = {}
        self.enabled = sys.stderr.isatty()

    def __enter__(self) -> _PhaseProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        for bar in self.bars.values():
            bar.close()

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        if not self.enabled:
            return
        bar = self.bars.get(phase)
        if bar is None:
            from tqdm import tqdm

            bar = self.bars[phase] = tqdm(
                total=total, desc=self._DESCRIPTIONS.get(phase, phase), unit=self._UNITS.get(phase, ""), file=sys.stderr
            )
        bar.update(done - bar.n)


class _NarratorError(ValueError):
    """The narrator options cannot work (one line for the user)."""


def _narrator_config(args: argparse.Namespace):
    import os

    url = getattr(args, "narrator", None) or os.environ.get("PRGUIDE_LLM_URL", "").strip()
    model = (getattr(args, "model", None) or os.environ.get("PRGUIDE_LLM_MODEL", "")).strip()
    if not url:
        if getattr(args, "model", None):
            raise _NarratorError("--model names the narrator's model: give the server with --narrator URL (or PRGUIDE_LLM_URL)")
        return None
    # Imported only when a narrator is asked for: it brings ssl and an HTTP client.
    from bot.narrator.client import LLMConfig

    if not model:
        raise _NarratorError(
            "name the model on the narrator server with --model (or PRGUIDE_LLM_MODEL), e.g. --model qwen2.5-coder:7b"
        )
    if not url.startswith(("http://", "https://")):
        raise _NarratorError(f"the narrator URL must be http(s), such as http://127.0.0.1:11434/v1, got {url!r}")
    timeout = float(os.environ.get("PRGUIDE_LLM_TIMEOUT", "") or 60)
    return LLMConfig(url=url.rstrip("/"), model=model, api_key=os.environ.get("PRGUIDE_LLM_API_KEY", "").strip(), timeout=timeout)


def _narrated(args: argparse.Namespace, guides: list) -> list:
    """``guides`` narrated when a narrator is configured (``--narrator`` or ``PRGUIDE_LLM_URL``), else as they are.

    As in the app, only quick and deep reads are narrated (:func:`bot.narrator.run.worth_narrating`):
    a skim or "safe to skip" guide is left as the engine wrote it, with no model call.

    The JSON data of each gains ``narration: {model, kept, rejected, fallback_reason}``.
    Narrations are cached in ``--db`` when given.
    """
    config = _narrator_config(args)
    if config is None:
        return guides
    import asyncio
    import dataclasses

    from bot.narrator.run import narrate_guide, worth_narrating
    from bot.narrator.store import SQLiteNarrations

    store = SQLiteNarrations(args.db if getattr(args, "db", None) else ":memory:")

    async def run() -> list:
        out = []
        for g in guides:
            if g.skipped or not worth_narrating(g.data):  # as the app: quick and deep reads only
                out.append(g)
                continue
            result = await narrate_guide(g.data, g.markdown, config, head_sha=str(g.data.get("head_sha") or ""), store=store)
            data = {**g.data, "markdown": result.markdown, "narration": result.narration.report()}
            out.append(dataclasses.replace(g, markdown=result.markdown, data=data))
        return out

    try:
        return asyncio.run(run())
    finally:
        store.close()


def _emit(guide, fmt: str) -> None:
    if fmt == "json":
        print(json.dumps(guide.data, ensure_ascii=False, indent=2))
    else:
        sys.stdout.write(guide.markdown)


def _open_store(args: argparse.Namespace):
    from bot.tagview.cli import open_guide_store

    db = getattr(args, "db", None)
    return open_guide_store(db) if db else None


def _store(args: argparse.Namespace, store, guides) -> None:
    if store is None:
        return
    for g in guides:
        store.save(
            g.record(),
            # Offline sources cannot tell whether a repository is private: assume it is unless told.
            visibility="public" if args.public else None,
            label_descriptions={name: spec.description for name, spec in g.label_specs.items()},
            change=g.change,
        )
    print(f"stored {len(guides)} guides in {args.db}", file=sys.stderr)


def _cmd_rules_check(args: argparse.Namespace) -> int:
    from bot.engine.rules import check_rule_paths

    problems = check_rule_paths(args.paths)
    for problem in problems:
        print(problem)
    if problems:
        print(f"prguide rules check: {len(problems)} {'problem' if len(problems) == 1 else 'problems'} found", file=sys.stderr)
        return 1
    print(f"ok: {', '.join(str(p) for p in args.paths)}")
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    from bot.app.server import run
    from bot.app.settings import Settings, SettingsError

    from bot.app.db import DatabaseError

    environ = dict(os.environ)
    if getattr(args, "role", None):
        environ["PRGUIDE_ROLE"] = args.role  # the flag wins over the variable, and is checked as it is
    try:
        settings = Settings.from_env(environ)
    except SettingsError as exc:
        print(f"prguide serve: cannot start: {'; '.join(exc.problems)}", file=sys.stderr)
        return 2
    if settings.database_url:
        import psycopg

        from bot.app.pg import redact

        try:
            run(settings)
        except (psycopg.Error, DatabaseError) as exc:
            print(f"prguide serve: PRGUIDE_DATABASE_URL {redact(settings.database_url)}: {one_line(exc)}", file=sys.stderr)
            return 1
        return 0
    try:
        run(settings)
    except (sqlite3.Error, DatabaseError) as exc:
        print(f"prguide serve: PRGUIDE_DB {settings.db_path} is not a usable prguide database ({one_line(exc)})", file=sys.stderr)
        return 1
    return 0
