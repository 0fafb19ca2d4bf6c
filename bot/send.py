"""``prguide send EVENT``: send one signed webhook delivery to a prguide server and say how it ended.

For trying prguide by hand (against ``prguide serve`` pointed at ``prguide sandbox``,
or the compose trial) and for scripts: every ``event.action`` prguide acts on
(:data:`bot.payloads.EVENTS`) is built in GitHub's shape ("Webhook events and
payloads", :mod:`bot.payloads`), signed with the webhook secret, and posted to
``--url``. Then the command asks the server what became of the delivery
(``GET /webhook/deliveries/{id}``, :mod:`bot.app.delivery_status`) until the job
has an outcome or ``--timeout`` passes, and prints one line::

    DELIVERY EVENT.ACTION [KEY]: STATUS (DETAIL)

STATUS is ``done``, ``ignored``, ``handled``, ``pong``, ``queued`` (with
``--timeout 0``), ``superseded``, ``gave up``, ``failed`` (a retry is queued),
``parked``, ``refused`` (the webhook said no: 400, 401, 413, 415, 503) or ``still
queued``/``still running`` when the timeout passed. Exit status 0 for the first
five, 1 for the rest, 2 for unusable options; an error is one line, never a traceback.

With ``--sandbox URL`` the GitHub API sandbox is made ready first: a pull request
delivery's bundle is served there (``POST /_sandbox/pulls``), a comment delivery's
comment is created there (``POST /_sandbox/comments`` or ``/_sandbox/review-comments``), and the delivery describes
the pull request, its repository and installation as the sandbox serves them, so the
job finds on "GitHub" what the delivery talks about.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot import github_objects as objects
from bot import payloads

#: Where ``prguide serve`` listens by default (``PORT`` 8080).
DEFAULT_URL = "http://127.0.0.1:8080/webhook"
#: Seconds to wait for the job's outcome by default.
DEFAULT_TIMEOUT = 30.0
#: Seconds between two questions about the job: the first soon, then less often.
FIRST_POLL, MAX_POLL = 0.02, 0.5
#: Pull request states ``--pr-state`` offers for comment and review deliveries.
PR_STATES = ("merged", "open", "closed")


class SendError(Exception):
    """Options that cannot make a delivery (exit status 2)."""


@dataclass
class Outcome:
    """How a delivery ended: ``status`` (see the module), ``detail`` and ``ok`` (exit status 0)."""

    delivery: str
    event: str
    key: str | None
    status: str
    detail: str | None = None
    ok: bool = True
    #: Said after the detail: that the server already had this delivery id (a redelivery).
    note: str | None = None

    def line(self) -> str:
        """The one line ``prguide send`` prints."""
        about = f"{self.delivery} {self.event}" + (f" {self.key}" if self.key else "")
        # A server's answer may span lines (an HTML or plain-text error page): the line stays one line.
        said = " ".join("; ".join(part for part in (self.detail, self.note) if part).split())
        return f"{about}: {self.status}" + (f" ({said})" if said else "")


# --- building the delivery ------------------------------------------------------------------------


def _split_event(name: str) -> tuple[str, str | None]:
    event, _, action = name.partition(".")
    return event, action or None


def _repo_name(text: str) -> str:
    owner, sep, name = text.partition("/")
    if not sep or not owner or not name or "/" in name:
        raise SendError(f"--repo must be OWNER/NAME, got {text!r}")
    return text


def _bundle(args: argparse.Namespace, *, checkout: bool = False) -> dict[str, Any] | None:
    """The bundle of ``--bundle`` (else, with ``checkout``, this checkout's newest merged pull request, else None),
    moved to ``--repo`` when one is given. Raises :class:`SendError` for an unusable file."""
    if not args.bundle:
        if not checkout:
            return None
        bundle = _checkout_bundle()
    else:
        from bot.sources.bundle import BundleError, read_bundle

        try:
            bundle = read_bundle(args.bundle)
        except BundleError as exc:
            raise SendError(str(exc)) from exc
    if args.repo and len(args.repo) == 1:
        from bot.sandbox.records import bundle_in_repo

        bundle = bundle_in_repo(bundle, _repo_name(args.repo[0]))
    return bundle


def _merged_bundle(args: argparse.Namespace) -> dict[str, Any]:
    """The pull request a ``pull_request`` delivery is about: ``--bundle``, else this checkout's (see :func:`_bundle`)."""
    bundle = _bundle(args, checkout=True)
    if bundle is None:  # pragma: no cover - checkout=True always finds one or raises
        raise SendError("give the pull request: --bundle FILE")
    return bundle


def _checkout_bundle() -> dict[str, Any]:
    """This checkout's newest merged pull request (or latest commit as #1), as ``prguide demo`` takes it."""
    from bot.demo import DemoError, load_source

    try:
        return load_source(None, ".").bundle
    except DemoError as exc:
        raise SendError(str(exc)) from exc


def _one_repo(args: argparse.Namespace, bundle: Mapping[str, Any] | None) -> str:
    if args.repo:
        if len(args.repo) != 1:
            raise SendError(f"{args.event} is about one repository: give --repo once")
        return _repo_name(args.repo[0])
    if bundle is not None:
        from bot.sandbox.records import repo_of_bundle

        return repo_of_bundle(bundle)
    raise SendError(f"{args.event} needs --repo OWNER/NAME (or --bundle FILE)")


def _webhook_repo(full_name: str, bundle: Mapping[str, Any] | None, prepared: Mapping[str, Any]) -> dict[str, Any]:
    """The delivery's ``repository``, complete: as the sandbox serves it, else from the bundle's ``base.repo``,
    else made from ``full_name``. A given repository of another name (``--repo`` moves a bundle) keeps
    only its visibility, default branch and owner's type."""
    given = prepared.get("repository")
    if not isinstance(given, Mapping) and bundle:
        given = ((bundle.get("pull") or {}).get("base") or {}).get("repo")
    if not isinstance(given, Mapping):
        return objects.repository(full_name)
    if str(given.get("full_name", "")).lower() != full_name.lower():
        owner = given.get("owner") if isinstance(given.get("owner"), Mapping) else {}
        given = {
            "full_name": full_name,
            "private": given.get("private") is True,
            "default_branch": given.get("default_branch") or "main",
            "owner": {"login": full_name.split("/", 1)[0], "type": owner.get("type") or "User"},
        }
    return objects.fill_repository(given)


def _pull_in(pull: Mapping[str, Any], repo: Mapping[str, Any]) -> dict[str, Any]:
    """``pull`` (a bundle's, partial) made a pull request of ``repo``: a ``base.repo`` or ``head.repo``
    naming another repository (the bundle's, before ``--repo`` moved it) is dropped, so ``repo`` takes its place."""
    out = dict(pull)
    original = (((pull.get("base") or {}).get("repo")) or {}).get("full_name")
    for side in ("base", "head"):
        ref = out.get(side)
        if isinstance(ref, Mapping) and isinstance(ref.get("repo"), Mapping):
            name = ref["repo"].get("full_name")
            if name != repo["full_name"] and (side == "base" or name == original):
                out[side] = {k: v for k, v in ref.items() if k != "repo"}
    return out


def _pull_for_comment(args: argparse.Namespace, bundle: Mapping[str, Any] | None) -> dict[str, Any]:
    """The pull request a comment or review delivery is about: the bundle's, or one made from the options."""
    if bundle is not None:
        pull = dict(bundle["pull"])
        if args.pr is not None and args.pr != pull.get("number"):
            raise SendError(f"--pr {args.pr} is not the bundle's pull request #{pull.get('number')}")
        return pull
    if args.pr is None:
        raise SendError(f"{args.event} needs --pr N (or --bundle FILE)")
    state = args.pr_state
    pull: dict[str, Any] = {
        "number": args.pr,
        "user": {"login": args.author or "octocat", "type": "User"},
        "state": "open" if state == "open" else "closed",
        "merged": state == "merged",
        "merged_at": payloads.iso() if state == "merged" else None,
    }
    if state != "merged":
        pull["closed_at"] = None if state == "open" else payloads.iso()
    return pull


def _new_id() -> int:
    """An id for a comment or review the options did not give: GitHub's are large and increasing."""
    return int(time.time() * 1000) % 10**10


def build_payload(args: argparse.Namespace, *, prepared: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The payload of ``args.event`` from the options (see ``prguide send --help``).

    ``prepared``: what :func:`prepare_sandbox` read or made there (``pull``,
    ``repository``, ``installation``, ``comment``), which then wins over the options'
    defaults. Raises :class:`SendError` when the options do not make one.
    """
    event, action = _split_event(args.event)
    prepared = prepared or {}
    installation_id = args.installation or prepared.get("installation") or 1
    sender = {"login": args.sender} if args.sender else None
    if event == "ping":
        return payloads.ping(1, args.app_id, created_at=payloads.iso(), url=args.url, sender=_user(sender))
    if event in ("installation", "installation_repositories"):
        return _installation_payload(args, event, str(action), installation_id, sender)
    if event == "repository":
        return _repository_payload(args, str(action), installation_id, sender)
    if event == "pull_request":
        bundle = _merged_bundle(args)
        repo = _webhook_repo(_one_repo(args, bundle), bundle, prepared)
        pull = _pull_in(bundle["pull"], repo)
        now = payloads.iso()
        pull.setdefault("closed_at", pull.get("merged_at") or now)
        if not args.unmerged:
            pull["merged_at"] = pull.get("merged_at") or now
        return payloads.merged_pull_request(
            pull, repo, installation_id=installation_id, merged=not args.unmerged, sender=sender
        )
    bundle = _bundle(args)
    repo = _webhook_repo(_one_repo(args, bundle), bundle, prepared)
    pull = dict(prepared["pull"]) if prepared.get("pull") else _pull_in(_pull_for_comment(args, bundle), repo)
    if args.body is None:
        raise SendError(f"{args.event} needs --body TEXT (the comment, e.g. '/prguide why')")
    if action == "edited" and args.previous_body is None:
        raise SendError("issue_comment.edited needs --previous-body TEXT (what the comment said before)")
    author = _user({"login": args.user, "type": "User"})
    given = dict(prepared.get("comment") or {})
    written_id = int(given.get("id") or args.comment_id or _new_id())
    full_pull = objects.pull_request(pull, repo, now=payloads.iso())
    now = payloads.iso()
    common = {"installation_id": installation_id, "sender": author}
    if event == "issue_comment":
        made = objects.issue_comment(
            written_id, repo["full_name"], full_pull["number"], author, args.body, created_at=now, updated_at=now
        )
        comment = {**made, **given, "body": args.body}
        comment["user"] = objects.fill_user(comment.get("user") or author)
        changes = {"body": {"from": args.previous_body}} if action == "edited" else None
        issue = objects.issue_of_pull(full_pull)
        return payloads.issue_comment(str(action), issue, comment, repo, changes=changes, **common)
    if event == "pull_request_review":
        review = objects.fill_review(
            {"id": written_id, "user": author, "body": args.body, "state": "commented", "submitted_at": now}, full_pull
        )
        return payloads.pull_request_review("submitted", full_pull, review, repo, **common)
    inline = {"id": written_id, "pull_request_review_id": written_id, "user": author, "body": args.body}
    inline.update(path="README.md", created_at=now, updated_at=now)
    comment = objects.fill_review_comment({**inline, **given}, full_pull)
    return payloads.pull_request_review_comment("created", full_pull, comment, repo, **common)


def _user(given: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A complete user from ``{"login", "type"?}``; ``None`` stays ``None``."""
    return objects.fill_user(dict(given)) if given else None


def _installation_payload(
    args: argparse.Namespace, event: str, action: str, installation_id: int, sender: Mapping[str, Any] | None
) -> dict[str, Any]:
    """An ``installation`` or ``installation_repositories`` payload: the account and ``--repo`` repositories."""
    names = [_repo_name(r) for r in args.repo or []]
    account = args.account or (names[0].split("/", 1)[0] if names else "octocat")
    repos = [
        objects.repository(name, owner_type=args.account_type if name.startswith(account + "/") else "User") for name in names
    ]
    account_obj = objects.user(account, args.account_type)
    installed = objects.installation(
        installation_id, account_obj, app_id=args.app_id, app_slug="prguide", permissions=payloads.APP_PERMISSIONS,
        events=payloads.APP_EVENTS, repository_selection="selected" if names else "all", created_at=payloads.iso(),
        suspended_at=payloads.iso() if action == "suspend" else None,
    )  # fmt: skip
    who = _user(sender) or account_obj
    if event == "installation":
        return payloads.installation(action, installed, repositories=repos or None, sender=who)
    if not names:
        raise SendError(f"{args.event} needs the repositories: --repo OWNER/NAME (repeatable)")
    added, removed = (repos, []) if action == "added" else ([], repos)
    return payloads.installation_repositories(action, installed, added=added, removed=removed, sender=who)


def _repository_payload(
    args: argparse.Namespace, action: str, installation_id: int, sender: Mapping[str, Any] | None
) -> dict[str, Any]:
    """A ``repository`` payload about ``--repo``, owned by an account of ``--account-type``: private
    after ``privatized``, public after ``publicized`` (``deleted``: public, as a deleted repository
    GitHub still names; the job asks GitHub either way). ``sender`` defaults to a user owner, else octocat."""
    full_name = _one_repo(args, None)
    repo = objects.repository(full_name, private=action == "privatized", owner_type=args.account_type)
    owner = repo["owner"]
    who = _user(sender) or (owner if owner["type"] == "User" else objects.user("octocat"))
    former = None
    if action in ("renamed", "transferred"):
        was = getattr(args, "former", None)
        if not was or "/" not in was:
            raise SendError(f"{args.event} needs the repository's former name: --former OWNER/NAME")
        was_owner, was_name = was.split("/", 1)
        former = {"name": was_name} if action == "renamed" else {"owner": objects.user(was_owner, args.account_type)}
    return payloads.repository(action, repo, installation_id=installation_id, sender=who, former=former)


# --- talking to the servers ----------------------------------------------------------------------


async def prepare_sandbox(http: Any, sandbox: str, args: argparse.Namespace) -> dict[str, Any]:
    """Make the sandbox at ``sandbox`` hold what ``args.event`` talks about; returns what the delivery takes from it.

    ``pull_request``: serves the bundle's pull request (``POST /_sandbox/pulls``).
    Comment and review events: the pull request must be served there already; the
    comment is created as ``--user`` (``POST /_sandbox/comments``, asking the sandbox
    not to send a delivery of its own, or ``POST /_sandbox/review-comments``). Returns ``{"pull",
    "repository", "installation"}`` as the sandbox serves them (``GET
    /_sandbox/pulls/...``), plus ``"comment"``. Installation and repository events and ``ping``
    need nothing. Raises :class:`RuntimeError` when the sandbox refuses.
    """
    event, _ = _split_event(args.event)
    base = sandbox.rstrip("/")
    if event in ("ping", "installation", "installation_repositories", "repository"):
        return {}
    bundle = _merged_bundle(args) if event == "pull_request" else _bundle(args)
    if event == "pull_request":
        body: dict[str, Any] = {"bundle": bundle}
        if args.repo:
            body["repo"] = _one_repo(args, bundle)
        added = await _request_json(http, "POST", f"{base}/_sandbox/pulls", body, expect=201)
        full_name, number = str(added.get("repo")), added.get("number")
    else:
        full_name = _one_repo(args, bundle)
        number = args.pr if args.pr is not None else ((bundle or {}).get("pull") or {}).get("number")
        if number is None:
            raise SendError(f"{args.event} needs --pr N (or --bundle FILE)")
    prepared = await _request_json(http, "GET", f"{base}/_sandbox/pulls/{full_name}/{number}", None, expect=200)
    if event in ("issue_comment", "pull_request_review_comment"):
        if args.body is None:
            raise SendError(f"{args.event} needs --body TEXT (the comment, e.g. '/prguide why')")
        written = {"repo": full_name, "number": number, "user": args.user, "body": args.body}
        where = "/_sandbox/comments" if event == "issue_comment" else "/_sandbox/review-comments"
        extra = {"deliver": False} if event == "issue_comment" else {}
        prepared["comment"] = await _request_json(http, "POST", base + where, {**written, **extra}, expect=201)
    return prepared


async def _request_json(http: Any, method: str, url: str, body: Any, *, expect: int) -> dict[str, Any]:
    async with http.request(method, url, json=body) as answer:
        text = await answer.text()
        if answer.status != expect:
            raise RuntimeError(f"the sandbox answered {method} {url} with {answer.status}: {text.strip()[:200]}")
    try:
        data = json.loads(text)
    except ValueError:
        raise RuntimeError(f"the sandbox answered {method} {url} with something other than JSON") from None
    return data if isinstance(data, dict) else {}


def _status_headers(secret: str, delivery_id: str) -> dict[str, str]:
    from bot.app.delivery_status import status_message

    return {"X-Hub-Signature-256": payloads.sign(secret, status_message(delivery_id)), "Accept": "application/json"}


def status_url(webhook_url: str, delivery_id: str) -> str:
    """Where the server at ``webhook_url`` tells what became of ``delivery_id`` (``…/webhook/deliveries/{id}``)."""
    from urllib.parse import quote

    return f"{webhook_url.rstrip('/')}/deliveries/{quote(delivery_id, safe='')}"


def _done_status(job: Mapping[str, Any]) -> tuple[str, str | None, bool] | None:
    """``(status, detail, ok)`` once the job ``job`` (the status answer) has an outcome, else None."""
    state, outcome, reason = job.get("state"), job.get("outcome"), job.get("reason")
    attempts = job.get("attempts") or 0
    if state == "done":
        if outcome == "superseded":
            return "superseded", reason, True
        if outcome == "given_up":
            return "gave up", reason, False
        return "done", reason, True
    if state == "parked":
        return f"parked after {attempts} failed attempt{'s' if attempts != 1 else ''}", reason, False
    if state == "queued" and attempts and reason:
        due = job.get("due_in_s")
        when = f"; attempt {attempts + 1} in {due:.0f} s" if isinstance(due, (int, float)) else ""
        return f"failed on attempt {attempts}{when}", reason, False
    return None


async def send(
    args: argparse.Namespace,
    *,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> Outcome:
    """Prepare the sandbox (``--sandbox``), send the delivery, and wait for its outcome (see the module).

    ``sleep``/``clock`` time the polling (injectable for tests). Raises
    :class:`SendError` for options that make no delivery, :class:`RuntimeError` when
    the sandbox refuses, and ``aiohttp.ClientError``/:class:`OSError` when a server
    cannot be reached.
    """
    import aiohttp

    secret = args.secret
    if secret is None:
        secret = os.environ.get("PRGUIDE_WEBHOOK_SECRET") or os.environ.get("GITHUB_WEBHOOK_SECRET")
    if not secret:
        raise SendError("no webhook secret: give --secret or set PRGUIDE_WEBHOOK_SECRET")
    event, _ = _split_event(args.event)
    outcome = Outcome(args.delivery or str(uuid.uuid4()), args.event, None, "")
    timeout = aiohttp.ClientTimeout(total=max(30.0, float(args.timeout or 0) + 10))
    async with aiohttp.ClientSession(timeout=timeout) as http:
        prepared = await prepare_sandbox(http, args.sandbox, args) if args.sandbox else {}
        body = json.dumps(build_payload(args, prepared=prepared)).encode("utf-8")
        headers = payloads.delivery_headers(body, secret, outcome.delivery, event, app_id=args.app_id)
        async with http.post(args.url, data=body, headers=headers) as answer:
            status, data, text = answer.status, *(await _read(answer))
        if status == 200:
            if event == "ping":
                outcome.status = "pong"
            elif "ignored" in data:
                outcome.status, outcome.detail = "ignored", str(data["ignored"])
            else:
                outcome.status, outcome.detail = "handled", text.strip()[:200] or None
            return outcome
        if status != 202:
            outcome.status, outcome.ok = f"refused {status}", False
            outcome.detail = str(data.get("error") or text.strip()[:200])
            return outcome
        outcome.key = data.get("queued") or data.get("duplicate")
        if "duplicate" in data:
            outcome.note = "a redelivery: the server had this delivery id already"
        if not args.timeout:
            outcome.status = "queued"
            return outcome
        return await _wait(http, args, secret, outcome, sleep=sleep, clock=clock)


async def _read(answer: Any) -> tuple[dict[str, Any], str]:
    """An answer's JSON object (``{}`` when it is not one) and its text."""
    text = await answer.text()
    if answer.content_type != "application/json":
        return {}, text
    try:
        data = json.loads(text)
    except ValueError:
        return {}, text
    return (data if isinstance(data, dict) else {}), text


async def _wait(http: Any, args: argparse.Namespace, secret: str, outcome: Outcome, *, sleep: Any, clock: Any) -> Outcome:
    """Ask the server about ``outcome.delivery`` until its job has an outcome or ``args.timeout`` passes.

    Polls ``GET /webhook/deliveries/{id}`` soon after sending, then less often (at most
    every :data:`MAX_POLL` seconds), never past the deadline.
    """
    url, headers = status_url(args.url, outcome.delivery), _status_headers(secret, outcome.delivery)
    started = clock()
    deadline = started + float(args.timeout)
    pause, last_state = FIRST_POLL, "queued"
    while True:
        async with http.get(url, headers=headers) as answer:
            status, is_json = answer.status, answer.content_type == "application/json"
            job, text = await _read(answer)
        if status == 200 and job:
            last_state = str(job.get("state") or last_state)
            key = job.get("key")
            # A delivery about no pull request is keyed by its own id: nothing worth repeating.
            outcome.key = key if isinstance(key, str) and not key.startswith("delivery:") else outcome.key
            done = _done_status(job)
            if done is not None:
                outcome.status, outcome.detail, outcome.ok = done
                if outcome.status == "done":
                    took = f"after {clock() - started:.2f} s"
                    outcome.detail = f"{outcome.detail}, {took}" if outcome.detail else took
                return outcome
        elif status == 404 and not is_json:
            outcome.status, outcome.detail = "queued", "this server does not tell how deliveries end (no /webhook/deliveries)"
            return outcome
        else:
            outcome.status, outcome.ok = f"queued, but the status request was refused {status}", False
            outcome.detail = str(job.get("error") or text.strip()[:200])
            return outcome
        now = clock()
        if now >= deadline:
            outcome.status, outcome.ok = f"still {last_state} after {args.timeout:g} s", False
            return outcome
        await sleep(min(pause, deadline - now))
        pause = min(MAX_POLL, pause * 2)


# --- command line ------------------------------------------------------------------------------------


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of 1 or more, got {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if value != value:  # NaN: no clock is ever past a NaN deadline
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}")
    if value < 0:
        raise argparse.ArgumentTypeError(f"seconds cannot be negative, got {value:g}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare ``prguide send``'s options on ``parser``."""
    parser.description = "Send one signed webhook delivery to a prguide server and print how its job ended."
    parser.epilog = "events: " + "; ".join(f"{name} ({what})" for name, what in payloads.EVENTS.items())
    parser.add_argument("event", choices=list(payloads.EVENTS), metavar="EVENT.ACTION", help="what to send (listed below)")
    where = parser.add_argument_group("where")
    where.add_argument(
        "--url", default=os.environ.get("PRGUIDE_WEBHOOK_URL") or DEFAULT_URL,
        help=f"prguide's webhook (default $PRGUIDE_WEBHOOK_URL or {DEFAULT_URL})",
    )  # fmt: skip
    where.add_argument("--secret", help="the webhook secret (default $PRGUIDE_WEBHOOK_SECRET, else $GITHUB_WEBHOOK_SECRET)")
    where.add_argument(
        "--installation", type=_positive, metavar="ID",
        help="installation.id (default: with --sandbox, the installation holding the repository; else 1)",
    )  # fmt: skip
    where.add_argument(
        "--app-id", type=_positive, default=1, metavar="ID", help="the app's id, in headers and installations (default 1)"
    )
    where.add_argument(
        "--delivery", metavar="ID", help="X-GitHub-Delivery (default a new GUID; the same id again is a redelivery)"
    )
    where.add_argument(
        "--timeout", type=_seconds, default=DEFAULT_TIMEOUT, metavar="SECONDS",
        help=f"wait this long for the job's outcome (default {DEFAULT_TIMEOUT:g}; 0: do not wait)",
    )  # fmt: skip
    where.add_argument(
        "--sandbox", metavar="URL",
        help="first make the GitHub API sandbox at URL hold the pull request (bundle) or the comment",
    )  # fmt: skip
    where.add_argument("--print", action="store_true", dest="print_only", help="print the payload and send nothing")
    what = parser.add_argument_group("what")
    what.add_argument(
        "--bundle", type=Path, metavar="FILE",
        help="a pull request bundle JSON (pull_request: default this checkout's newest merged pull request)",
    )  # fmt: skip
    what.add_argument("--repo", action="append", metavar="OWNER/NAME", help="the repository (repeatable for installation events)")
    what.add_argument("--pr", type=_positive, metavar="N", help="the pull request's number")
    what.add_argument("--body", metavar="TEXT", help="the comment's or review's text, e.g. '/prguide why'")
    what.add_argument("--previous-body", metavar="TEXT", help="issue_comment.edited: the text before the edit")
    what.add_argument("--user", default="monalisa", metavar="LOGIN", help="who wrote the comment or review (default monalisa)")
    what.add_argument(
        "--author", metavar="LOGIN", help="the pull request's author without --bundle or --sandbox (default octocat)"
    )
    what.add_argument(
        "--pr-state", choices=PR_STATES, default="merged",
        help="the pull request's state without --bundle or --sandbox (default merged)",
    )  # fmt: skip
    what.add_argument("--comment-id", type=_positive, metavar="N", help="the comment's or review's id (default a new one)")
    what.add_argument("--unmerged", action="store_true", help="pull_request.closed: closed without merging")
    what.add_argument(
        "--account", metavar="LOGIN", help="installation events: the account (default the owner of the first --repo)"
    )
    what.add_argument(
        "--account-type", choices=("User", "Organization"), default="Organization",
        help="installation events: the account's type; repository events: the owner's (default Organization)",
    )  # fmt: skip
    what.add_argument(
        "--former", metavar="OWNER/NAME", help="repository.renamed, repository.transferred: the repository's former name"
    )
    what.add_argument(
        "--sender", metavar="LOGIN", help="who triggered the delivery (default as GitHub would: the merger, the commenter...)"
    )


def run_cli(args: argparse.Namespace) -> int:
    """Run ``prguide send``; prints one line and returns 0, 1 or 2 (see the module)."""
    import aiohttp

    try:
        if args.print_only:
            print(json.dumps(build_payload(args), ensure_ascii=False, indent=2))
            return 0
        outcome = asyncio.run(send(args))
    except SendError as exc:
        print(f"prguide send: {exc}", file=sys.stderr)
        return 2
    except (aiohttp.ClientError, OSError, TimeoutError, RuntimeError) as exc:
        print(f"prguide send: {_reach_error(exc, args)}", file=sys.stderr)
        return 1
    print(outcome.line())
    return 0 if outcome.ok else 1


def _reach_error(exc: BaseException, args: argparse.Namespace) -> str:
    if isinstance(exc, RuntimeError):
        return str(exc)
    if isinstance(exc, TimeoutError):
        return f"{args.url}: no answer in time"
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"cannot send: {text}"
