"""``prguide sandbox``: run the local GitHub until interrupted.

``add_arguments(parser)`` declares the options on an argparse parser;
``await run(args)`` loads the bundles, starts the server, prints its base URL
and serves until SIGINT or SIGTERM (or until the task is cancelled).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path

from bot.sandbox.errors import BundleError
from bot.sandbox.server import Sandbox
from bot.sandbox.state import ROLES, load_bundles


def _collaborator(text: str) -> tuple[str, str]:
    login, sep, role = text.partition("=")
    if not sep or not login or role not in ROLES:
        raise argparse.ArgumentTypeError(f"expected LOGIN=ROLE with ROLE one of {', '.join(ROLES)}, got {text!r}")
    return login, role


def _installation(text: str) -> tuple[int, str]:
    number, sep, account = text.partition("=")
    if not sep or not number.isdigit() or int(number) < 1 or not account or "/" in account:
        raise argparse.ArgumentTypeError(f"expected ID=ACCOUNT with ID a positive number, got {text!r}")
    return int(number), account


def _bundles(text: str) -> tuple[Path, str | None]:
    folder, sep, repo = text.partition("=")
    if sep and (repo.count("/") != 1 or not all(repo.split("/"))):
        raise argparse.ArgumentTypeError(f"expected DIR or DIR=OWNER/NAME, got {text!r}")
    return Path(folder), (repo if sep else None)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the sandbox's options on ``parser``."""
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: 0, any free port)")
    parser.add_argument("--app-id", type=int, required=True, help="the GitHub App's ID, expected as the JWT 'iss'")
    parser.add_argument(
        "--app-key", type=Path, required=True, help="the app's PEM private key; JWTs are checked against its public key"
    )
    parser.add_argument("--app-slug", default="prguide", help="the app's slug; its comments come from '<slug>[bot]'")
    parser.add_argument(
        "--installation-id",
        type=int,
        default=1,
        help="the one installation's ID, holding every repository (default: 1)",
    )
    parser.add_argument(
        "--installation",
        type=_installation,
        action="append",
        default=[],
        metavar="ID=ACCOUNT",
        help="an installation on every repository of ACCOUNT (repeatable; replaces --installation-id)",
    )
    parser.add_argument(
        "--bundles",
        type=_bundles,
        action="append",
        default=[],
        metavar="DIR[=OWNER/NAME]",
        help="folder of pull request bundle *.json files, served in OWNER/NAME when given (repeatable)",
    )
    parser.add_argument(
        "--repo",
        type=Path,
        action="append",
        default=[],
        help="local git repository whose merged pull requests to serve",
    )
    parser.add_argument(
        "--collaborator",
        type=_collaborator,
        action="append",
        default=[],
        metavar="LOGIN=ROLE",
        help="a collaborator and role (admin, maintain, write, triage, read, none); repeatable",
    )
    parser.add_argument("--token-lifetime", type=float, default=3600.0, help="installation token lifetime, seconds")
    parser.add_argument("--rate-limit", type=int, default=5000, help="requests an hour per installation")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="delay every GitHub API answer by this much")
    parser.add_argument(
        "--webhook-url", metavar="URL",
        help="send comments made with POST /_sandbox/comments to this prguide webhook as issue_comment deliveries",
    )  # fmt: skip
    parser.add_argument(
        "--webhook-secret", metavar="SECRET",
        help="the webhook secret that signs them (default $PRGUIDE_WEBHOOK_SECRET, else $GITHUB_WEBHOOK_SECRET)",
    )  # fmt: skip


def build_sandbox(args: argparse.Namespace) -> Sandbox:
    """Create the :class:`Sandbox` the options describe.

    Raises :class:`OSError` for an unreadable key or folder, :class:`ValueError`
    for a key that is not a PEM private key or a webhook URL without a secret, :class:`BundleError` for a bad bundle,
    and :class:`bot.sources.gitrepo.GitRepositoryError` when git cannot read ``--repo``.
    """
    key = Path(args.app_key).read_bytes()
    secret = None
    if getattr(args, "webhook_url", None):
        secret = args.webhook_secret or os.environ.get("PRGUIDE_WEBHOOK_SECRET") or os.environ.get("GITHUB_WEBHOOK_SECRET")
        if not secret:
            raise ValueError("--webhook-url needs the secret: --webhook-secret, or set PRGUIDE_WEBHOOK_SECRET")
    sandbox = Sandbox(
        args.app_id,
        key,
        collaborators=dict(args.collaborator),
        app_slug=args.app_slug,
        installation_id=args.installation_id,
        installations=[{"id": number, "account": account} for number, account in args.installation] or None,
        token_lifetime=args.token_lifetime,
        rate_limit=args.rate_limit,
        latency_ms=args.latency_ms,
        webhook_url=getattr(args, "webhook_url", None) or None,
        webhook_secret=secret,
    )
    for folder, repo in args.bundles:
        if not folder.is_dir():
            raise BundleError(f"--bundles {folder}: not a folder")
        for bundle in load_bundles(sorted(folder.glob("*.json"))):
            sandbox.add_bundle(bundle, repo=repo)
    for repo in args.repo:
        sandbox.add_git_repo(repo)
    return sandbox


async def run(args: argparse.Namespace) -> int:
    """Serve until SIGINT/SIGTERM; returns the exit status (2 when the options cannot be used)."""
    try:
        sandbox = build_sandbox(args)
    except (OSError, ValueError, RuntimeError) as exc:  # RuntimeError: git failed on --repo
        print(f"prguide sandbox: {exc}", file=sys.stderr)
        return 2
    base_url = await sandbox.start(args.host, args.port)
    pulls = sum(len(r.pulls) for r in sandbox.state.repos.values())
    # The names deliveries must use (`prguide send --repo`): a clone's is not obvious (local/FOLDER without a GitHub origin).
    names = sorted(r.full_name for r in sandbox.state.repos.values() if r.pulls)
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    of = f" of {shown}" if names else ""
    hook = sandbox.state.webhook
    delivers = f"; comments are delivered to {hook.url}" if hook is not None else ""
    print(f"prguide sandbox: serving {pulls} pull requests{of} at {base_url}{delivers}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(sig)
        await sandbox.close()
    return 0
