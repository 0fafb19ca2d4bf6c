"""``prguide demo``: the whole app, end to end, on one real merged pull request, offline.

One command, no credentials, no network. It

1. takes a pull request bundle (``--bundle FILE``) or the newest merged pull request of
   a local git repository (``--repo PATH``, default ``.``; a repository without one
   has its latest commit presented as pull request #1);
2. makes a fresh RSA app key and a random webhook secret, and starts the GitHub API
   sandbox (:class:`bot.sandbox.Sandbox`) and the real webhook server
   (:func:`bot.app.server.create_app`) on free loopback ports, with a temporary SQLite
   job database;
3. sends the server a signed ``pull_request`` ``closed`` delivery (``merged: true``)
   shaped like GitHub's ("Webhook events and payloads", ``pull_request``), waits for
   the worker pool to go idle, and
4. prints the comment and labels that landed in the sandbox, the GitHub API calls the
   app made (the sandbox's request log, ``GET /_sandbox/state``) and the time taken.

Exit status: 0 when exactly one comment landed and nothing went wrong, 1 when the run
failed (the reasons and the server's warnings are printed), 2 for unusable input.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import secrets
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.payloads import delivery_headers as payload_headers
from bot.payloads import installation_ref, merged_pull_request

#: The demo app's id; the sandbox only checks that app JWTs carry it.
APP_ID = 1
#: The one installation the sandbox knows.
INSTALLATION_ID = 1
#: GitHub's deliveries carry ``User-Agent: GitHub-Hookshot/<build>`` ("Webhook events and payloads").
USER_AGENT = "GitHub-Hookshot/prguide-demo"
#: Seconds the whole delivery may take before the demo gives up.
DEFAULT_TIMEOUT = 60.0
#: Seconds a job still running at the end (after a timeout) gets to finish.
STOP_TIMEOUT = 5.0
#: Job outcomes that leave a published guide (:func:`bot.features.guide.handle_pull_request_merged`).
PUBLISHED = ("created", "edited", "unchanged")


class DemoError(Exception):
    """Input the demo cannot use (no bundle, not a git repository, bad rule files); exit status 2."""


@dataclass(frozen=True)
class DemoSource:
    """The pull request to replay: a bundle dict, where it came from, and a notice for the reader.

    ``git_dir`` is the repository it was read from, if any (the sandbox then serves that
    checkout's files, such as ``.github/prguide.yml``, through the contents API).
    """

    bundle: dict[str, Any]
    origin: str
    notice: str | None = None
    git_dir: Path | None = None


@dataclass(frozen=True)
class ApiCall:
    """Requests the app sent to one GitHub endpoint: ``method``, ``path`` (no query), ``count``, ``statuses``."""

    method: str
    path: str
    count: int
    statuses: tuple[int, ...]


@dataclass
class DemoResult:
    """What one demo run saw.

    ``comments``: ``[{"user", "body"}]`` on the pull request, oldest first. ``labels``:
    label names on it. ``api_calls``: the sandbox's request log grouped by endpoint,
    in first-call order. ``took_ms``: from sending the delivery until the worker pool
    was idle; ``total_ms``: the whole run, start-up and shut-down included.
    ``job``: the job's log fields (``outcome``, ``api_calls``, ``duration_ms``, ...).
    ``log``: the server's warnings and errors, one line each. ``problems``: why the run
    failed, empty when it did not.
    """

    repository: str
    number: int
    title: str
    origin: str
    notice: str | None = None
    lang: str = "en"
    sandbox_url: str = ""
    app_url: str = ""
    delivery: str = ""
    webhook_status: int | None = None
    comments: list[dict[str, Any]] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    api_calls: list[ApiCall] = field(default_factory=list)
    queue: dict[str, int] = field(default_factory=dict)
    job: dict[str, Any] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    took_ms: float = 0.0
    total_ms: float = 0.0

    @property
    def ok(self) -> bool:
        """True when exactly one comment landed and nothing went wrong."""
        return not self.problems and len(self.comments) == 1

    @property
    def api_call_count(self) -> int:
        """GitHub API requests the app sent in all."""
        return sum(call.count for call in self.api_calls)

    def to_json(self) -> dict[str, Any]:
        """The machine-readable summary ``prguide demo --json`` prints."""
        comment = self.comments[0] if len(self.comments) == 1 else None
        return {
            "ok": self.ok,
            "repository": self.repository,
            "number": self.number,
            "title": self.title,
            "source": self.origin,
            "notice": self.notice,
            "lang": self.lang,
            "delivery": self.delivery,
            "webhook_status": self.webhook_status,
            "comment": comment,
            "comment_count": len(self.comments),
            "labels": self.labels,
            "api_calls": {
                "total": self.api_call_count,
                "endpoints": [
                    {"method": c.method, "path": c.path, "count": c.count, "statuses": list(c.statuses)}
                    for c in self.api_calls
                ],
            },
            "job": self.job,
            "queue": self.queue,
            "took_ms": round(self.took_ms, 1),
            "total_ms": round(self.total_ms, 1),
            "log": self.log,
            "problems": self.problems,
        }


# --- the pull request to replay ------------------------------------------------------


def latest_commit_bundle(repo: str | Path) -> dict[str, Any]:
    """The latest first-parent commit of ``repo`` as merged pull request #1, title = commit subject.

    For repositories with no squash-merge ``(#N)`` or ``Merge pull request #N`` commits
    yet. Shape and errors as :func:`bot.sources.gitrepo.commit_as_pull_request`.
    """
    from bot.sources.gitrepo import commit_as_pull_request

    return commit_as_pull_request(repo, number=1)


def load_source(bundle: str | Path | None = None, repo: str | Path = ".") -> DemoSource:
    """The pull request to replay: the bundle file when given, else ``repo``'s newest merged one.

    A repository without merged pull requests gives its latest commit as #1, with a
    notice saying so. Raises :class:`DemoError` for an unreadable or malformed bundle
    file, or a path that is not a git repository.
    """
    from bot.sources.bundle import BundleError, read_bundle
    from bot.sources.gitrepo import GitRepositoryError, merged_pull_requests

    if bundle is not None:
        try:
            data = read_bundle(bundle)
        except BundleError as exc:
            raise DemoError(str(exc)) from exc
        return DemoSource(data, origin=str(bundle))
    try:
        found = merged_pull_requests(repo, last=1)
        if found:
            return DemoSource(found[0], origin=f"git repository {repo}", git_dir=Path(repo))
        data = latest_commit_bundle(repo)
    except GitRepositoryError as exc:
        raise DemoError(f"{exc} (or give a pull request bundle with --bundle FILE)") from exc
    sha = data["_meta"]["commit"][:12]
    notice = (
        f"no merged pull request in {repo}: presenting its latest commit {sha} "
        f"({data['pull']['title']!r}) as pull request #1"
    )
    return DemoSource(data, origin=f"git repository {repo}, commit {sha}", notice=notice, git_dir=Path(repo))


# --- what GitHub would send ------------------------------------------------------------


def generate_private_key() -> str:
    """A new 2048-bit RSA private key, PKCS#8 PEM text, as GitHub hands out app keys."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return pem.decode("ascii")


def installation_node_id(installation_id: int) -> str:
    """The global node id GitHub gives an installation (``installation.node_id`` in payloads)."""
    return installation_ref(installation_id)["node_id"]


def merged_event(pull: Mapping[str, Any], repository: Mapping[str, Any], *, installation_id: int) -> dict[str, Any]:
    """The ``pull_request`` event payload GitHub sends when ``pull`` is merged.

    As in "Webhook events and payloads", ``pull_request`` action ``closed``: ``action``,
    ``number``, ``pull_request`` (``pull`` completed as GitHub sends it, ``state: closed``,
    ``merged: true``), ``repository`` (``repository``, a "Get a repository" object or just
    ``{full_name, owner, private...}``, completed likewise), ``organization`` for an
    organization's repository, ``installation`` ``{id, node_id}``
    and ``sender`` (who merged: ``merged_by``, else the author). See
    :func:`bot.payloads.merged_pull_request`. Raises :class:`ValueError`
    when ``pull`` has no integer ``number``.
    """
    return merged_pull_request(pull, repository, installation_id=installation_id)


def delivery_headers(body: bytes, secret: str, delivery_id: str, event: str = "pull_request") -> dict[str, str]:
    """The HTTP headers of a webhook delivery of ``body`` ("Webhook events and payloads", "Delivery headers")."""
    headers = payload_headers(body, secret, delivery_id, event, app_id=APP_ID)
    headers["User-Agent"] = USER_AGENT
    return headers


def group_requests(requests: Sequence[Mapping[str, Any]]) -> list[ApiCall]:
    """Group a sandbox request log (``[{method, path, status}]``) by method and path without query, in first-call order."""
    counts: Counter[tuple[str, str]] = Counter()
    statuses: dict[tuple[str, str], set[int]] = {}
    for request in requests:
        key = (str(request.get("method")), str(request.get("path", "")).split("?", 1)[0])
        counts[key] += 1
        statuses.setdefault(key, set()).add(int(request.get("status") or 0))
    return [ApiCall(method, path, counts[(method, path)], tuple(sorted(statuses[(method, path)]))) for method, path in counts]


# --- the run -------------------------------------------------------------------------------


class _LogRecorder(logging.Handler):
    """Keeps the server's log records so the demo can show them, or fail on an error."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextlib.contextmanager
def _recording_logs() -> Iterator[_LogRecorder]:
    recorder = _LogRecorder()
    root, jobs = logging.getLogger(), logging.getLogger("prguide.jobs")
    saved_level = jobs.level
    # The job's one summary line (outcome, api_calls) is INFO; everything else only from WARNING.
    jobs.setLevel(logging.INFO)
    root.addHandler(recorder)
    try:
        yield recorder
    finally:
        root.removeHandler(recorder)
        jobs.setLevel(saved_level)


def _log_line(record: logging.LogRecord) -> str:
    reason = getattr(record, "reason", None)
    text = f"{record.levelname} {record.name}: {record.getMessage()}"
    if reason:
        text += f" ({reason})"
    if record.exc_info and record.exc_info[1] is not None:
        text += f" [{type(record.exc_info[1]).__name__}: {record.exc_info[1]}]"
    return text


_JOB_FIELDS = ("outcome", "attempt", "api_calls", "duration_ms", "comment_id", "labels_added", "labels_removed", "reason")


async def run_demo(
    source: DemoSource,
    *,
    lang: str = "en",
    rules: Sequence[str | Path] = (),
    timeout: float = DEFAULT_TIMEOUT,
    faults: Sequence[Mapping[str, Any]] = (),
) -> DemoResult:
    """Replay ``source`` through the sandbox and the real webhook server; return what landed.

    ``lang``: ``"en"`` or ``"zh"``. ``rules``: extra rule files or folders on top of the
    shipped ones. ``timeout``: seconds the delivery may take, start to idle pool.
    ``faults``: failures the sandbox should plan (:mod:`bot.sandbox.faults`), to watch
    how the app copes.
    Everything listens on 127.0.0.1 only and is stopped before this returns. Failures of
    the run itself (a refused delivery, a failed job, an error in the server's log, a
    timeout, not exactly one comment) are in :attr:`DemoResult.problems`; raises
    :class:`DemoError` for bad rule files or a bundle the sandbox cannot serve.
    """
    import aiohttp
    from aiohttp import web

    from bot.app.server import create_app, wait_idle
    from bot.app.settings import Settings
    from bot.engine.rules import RuleError, load_rules
    from bot.sandbox import BundleError, Sandbox

    started = time.perf_counter()
    try:
        ruleset = load_rules(list(rules))
    except RuleError as exc:
        raise DemoError(str(exc)) from exc
    pull = source.bundle["pull"]
    result = DemoResult(
        repository="", number=int(pull["number"]), title=str(pull.get("title") or ""),
        origin=source.origin, notice=source.notice, lang=lang,
    )  # fmt: skip
    key = generate_private_key()
    secret = secrets.token_hex(32)
    sandbox = Sandbox(APP_ID, key, installation_id=INSTALLATION_ID)
    try:
        result.repository = sandbox.state.add_bundle(source.bundle, git_dir=source.git_dir)
        sandbox.add_faults(list(faults))
    except BundleError as exc:
        raise DemoError(f"{source.origin}: {exc}") from exc

    with tempfile.TemporaryDirectory(prefix="prguide-demo-") as tmp, _recording_logs() as logs:
        runner: web.AppRunner | None = None
        try:
            result.sandbox_url = await sandbox.start("127.0.0.1", 0)
            settings = Settings(
                app_id=APP_ID,
                private_key=key,
                webhook_secret=secret,
                api_url=result.sandbox_url,
                host="127.0.0.1",
                port=0,
                lang=lang,
                db_path=Path(tmp) / "prguide.db",
                workers=2,
                log_level="WARNING",
            )
            # One attempt: a failure shows up now instead of as a retry minutes later.
            app = create_app(settings, rules=ruleset, pool_options={"max_attempts": 1}, stop_timeout=STOP_TIMEOUT)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            host, port = runner.addresses[0][:2]
            result.app_url = f"http://{host}:{port}"

            owner, name = result.repository.split("/", 1)
            repository = sandbox.state.repo_json(sandbox.state.repo(owner, name))
            payload = merged_event(pull, repository, installation_id=INSTALLATION_ID)
            body = json.dumps(payload).encode("utf-8")
            result.delivery = str(uuid.uuid4())
            headers = delivery_headers(body, secret, result.delivery)

            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as http:
                sent = time.perf_counter()
                async with http.post(f"{result.app_url}/webhook", data=body, headers=headers) as answer:
                    result.webhook_status = answer.status
                    answer_text = await answer.text()
                if answer.status != 202:
                    result.problems.append(f"the webhook answered {answer.status}: {answer_text.strip()[:300]}")
                else:
                    try:
                        await asyncio.wait_for(wait_idle(app), timeout)
                    except TimeoutError:
                        result.problems.append(f"the worker pool was still busy after {timeout:g} s")
                result.took_ms = (time.perf_counter() - sent) * 1000
                async with http.get(f"{result.app_url}/healthz") as health:
                    result.queue = dict((await health.json()).get("queue") or {})
                async with http.get(f"{result.sandbox_url}/_sandbox/state") as state_answer:
                    state = await state_answer.json()
        finally:
            if runner is not None:
                await runner.cleanup()
            await sandbox.close()

    issue = f"{result.repository}#{result.number}"
    result.comments = [{"user": c["user"], "body": c["body"]} for c in state["comments"].get(issue, [])]
    result.labels = list(state["labels"].get(issue, []))
    result.api_calls = group_requests(state["requests"])
    errors = 0
    for record in logs.records:
        if record.name == "prguide.jobs" and hasattr(record, "outcome"):
            result.job = {k: getattr(record, k) for k in _JOB_FIELDS if hasattr(record, k)}
        elif record.levelno >= logging.WARNING:
            result.log.append(_log_line(record))
            errors += record.levelno >= logging.ERROR
    _judge(result, errors)
    result.total_ms = (time.perf_counter() - started) * 1000
    return result


def _judge(result: DemoResult, errors: int) -> None:
    if result.webhook_status == 202:
        outcome = result.job.get("outcome")
        if outcome is None:
            result.problems.append("the delivery was queued but no job ran")
        elif outcome not in PUBLISHED:
            reason = result.job.get("reason")
            result.problems.append(f"the job ended {outcome!r}" + (f": {reason}" if reason else ""))
    if errors:
        result.problems.append(f"the server logged {errors} error(s)")
    if len(result.comments) != 1:
        result.problems.append(f"expected exactly one comment on {result.repository}#{result.number}, found {len(result.comments)}")


# --- presentation ----------------------------------------------------------------------------


def format_result(result: DemoResult) -> str:
    """The human-readable report: header, the comment's Markdown, labels, API calls, time taken."""
    rule = "─" * 72
    lines = [f"prguide demo: {result.repository}#{result.number} {result.title!r} from {result.origin}"]
    if result.notice:
        lines.append(f"note: {result.notice}")
    lines.append(
        f"sandbox {result.sandbox_url} · webhook server {result.app_url} · "
        f"delivery {result.delivery} answered {result.webhook_status}"
    )
    for comment in result.comments:
        lines += ["", f"── comment by {comment['user']} " + "─" * max(3, 56 - len(comment["user"])), comment["body"].rstrip("\n"), rule]
    if not result.comments:
        lines += ["", "(no comment landed)"]
    lines.append(f"labels: {', '.join(result.labels) if result.labels else '(none)'}")
    lines.append(f"{result.api_call_count} API calls:")
    width = max((len(c.method) for c in result.api_calls), default=0)
    for call in result.api_calls:
        statuses = ",".join(str(s) for s in call.statuses)
        lines.append(f"  {call.count:>3} × {call.method:<{width}} {call.path}  → {statuses}")
    lines.append(f"took {result.took_ms:.0f} ms from delivery to published guide ({result.total_ms:.0f} ms in all)")
    return "\n".join(lines) + "\n"


def format_failure(result: DemoResult) -> str:
    """Why the run failed, and the server's warnings and errors, for stderr."""
    lines = [f"prguide demo: FAILED: {problem}" for problem in result.problems]
    if result.log:
        lines.append("server log:")
        lines += [f"  {line}" for line in result.log]
    return "\n".join(lines) + "\n"


# --- command line ---------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare ``prguide demo``'s options on ``parser``."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--bundle", type=Path, metavar="FILE",
        help='a pull request bundle JSON file: {"pull", "files", "reviews", "review_comments"}',
    )  # fmt: skip
    where.add_argument(
        "--repo", type=Path, default=Path("."), metavar="PATH",
        help="replay the newest merged pull request of this git repository (default: .)",
    )  # fmt: skip
    parser.add_argument("--lang", choices=("en", "zh"), default="en", help="language of the guide (default en)")
    parser.add_argument(
        "--rules", action="append", type=Path, default=[], metavar="FILE",
        help="extra rule file or folder on top of the shipped rules (repeatable)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print a machine-readable summary instead")
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
        help=f"give up when the delivery takes longer (default {DEFAULT_TIMEOUT:g})",
    )  # fmt: skip


def run_cli(args: argparse.Namespace) -> int:
    """Run ``prguide demo``; returns 0 (one comment landed), 1 (the run failed) or 2 (unusable input)."""
    try:
        source = load_source(args.bundle, args.repo)
        result = asyncio.run(run_demo(source, lang=args.lang, rules=args.rules, timeout=args.timeout))
    except DemoError as exc:
        print(f"prguide demo: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result.to_json(), ensure_ascii=False, indent=2))
    else:
        sys.stdout.write(format_result(result))
    if not result.ok:
        sys.stderr.write(format_failure(result))
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bot.demo``: the same as ``prguide demo``."""
    parser = argparse.ArgumentParser(prog="prguide demo", description=__doc__.split("\n", 1)[0])
    add_arguments(parser)
    return run_cli(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
