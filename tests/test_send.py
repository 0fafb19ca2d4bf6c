"""``prguide send`` end to end: the command line against the real app and the GitHub sandbox on loopback.

The app is the one ``prguide serve`` runs (:func:`bot.app.server.create_app`); the
command runs as ``prguide send ...`` (``bot.cli.main``, in a thread, as a user's
shell would run it) and talks HTTP to both. It must print one line with the
delivery's outcome as soon as the job has one.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import aiohttp
import pytest
from loopback import SECRET, Sleeps, running_app, settings_for, shipped_rules
from sandbox_helpers import app_private_key, start_sandbox, synthetic_bundle  # noqa: F401

from bot import cli, payloads
from bot.app.delivery_status import status_message
from bot.app.server import STATE, wait_idle
from bot.send import build_payload, send

REPO = "octo-org/demo"
LINE = re.compile(r"(?P<delivery>\S+) (?P<event>[a-z_]+(?:\.[a-z_]+)?)(?: (?P<key>\S+))?: (?P<status>[^(]+?)(?: \((?P<detail>.*)\))?")


class Trial:
    """The app, the sandbox, and ``prguide send`` pointed at both."""

    def __init__(self, client: Any, sandbox: Any, capsys: Any):
        self.client, self.app, self.sandbox, self.capsys = client, client.app, sandbox, capsys
        self.url = str(client.make_url("/webhook"))

    async def send(self, *argv: str) -> tuple[int, str, str]:
        """Run ``prguide send ARGV --url APP --secret SECRET``; returns (exit status, stdout, stderr)."""
        self.capsys.readouterr()
        code = await asyncio.to_thread(cli.main, ["send", *argv, "--url", self.url, "--secret", SECRET])
        out, err = self.capsys.readouterr()
        return code, out, err

    def parsed(self, out: str) -> dict[str, str]:
        lines = out.splitlines()
        assert len(lines) == 1, out
        match = LINE.fullmatch(lines[0])
        assert match, lines[0]
        return match.groupdict()


@pytest.fixture
async def trial(app_private_key, tmp_path, capsys):  # noqa: F811
    async with start_sandbox(app_private_key) as sandbox:
        settings = settings_for(sandbox, app_private_key, tmp_path)
        options = {"rules": shipped_rules(), "client_options": {"sleep": Sleeps()}}
        async with running_app(settings, sandbox=sandbox, **options) as client:
            yield Trial(client, sandbox, capsys)


def bundle_file(tmp_path, number: int = 7, repo: str = REPO) -> str:
    path = tmp_path / f"{number}.json"
    path.write_text(json.dumps(synthetic_bundle(number, repo=repo)), encoding="utf-8")
    return str(path)


async def test_a_merge_sent_from_a_bundle_gets_its_guide_and_says_so_at_once(trial, tmp_path):
    code, out, err = await trial.send(
        "pull_request.closed", "--bundle", bundle_file(tmp_path), "--sandbox", trial.sandbox.base_url, "--timeout", "60"
    )
    assert (code, err) == (0, "")
    line = trial.parsed(out)
    assert (line["event"], line["key"], line["status"]) == ("pull_request.closed", f"{REPO}#7", "done")
    assert re.fullmatch(r"created, after \d+\.\d+ s", line["detail"])
    # As soon as the job ended, not when the timeout ran out.
    assert float(line["detail"].split()[-2]) < 60
    (comment,) = trial.sandbox.comments(REPO, 7)
    assert comment.user == "prguide[bot]" and "Reading guide for #7" in comment.body

    # The same delivery id again is a redelivery: nothing runs twice, and the first outcome is told.
    again = await trial.send("pull_request.closed", "--bundle", bundle_file(tmp_path), "--delivery", line["delivery"])
    assert again[0] == 0 and "done (created" in again[1] and "a redelivery" in again[1]
    assert len(trial.sandbox.comments(REPO, 7)) == 1


async def test_a_slash_command_in_a_comment_runs_and_is_answered(trial, tmp_path):
    trial.sandbox.add_bundle(synthetic_bundle(7, repo=REPO))
    trial.sandbox.set_collaborators({"alice": "write"})
    code, out, err = await trial.send(
        "issue_comment.created", "--repo", REPO, "--pr", "7", "--body", "/prguide refresh", "--user", "alice",
        "--sandbox", trial.sandbox.base_url,
    )  # fmt: skip
    assert (code, err) == (0, ""), out
    line = trial.parsed(out)
    assert (line["event"], line["key"], line["status"]) == ("issue_comment.created", f"{REPO}#7", "done")
    assert line["detail"].startswith("done, after ")
    comments = trial.sandbox.comments(REPO, 7)
    command = next(c for c in comments if c.user == "alice")
    assert command.body == "/prguide refresh"
    reactions = [r["content"] for r in trial.sandbox.snapshot()["reactions"][str(command.id)]]
    assert reactions == ["eyes", "+1"]
    assert [c.user for c in comments if c.user == "prguide[bot]"] == ["prguide[bot]"]  # the rebuilt guide

    # Someone without write access is refused, and the line says so.
    code, out, _ = await trial.send(
        "issue_comment.created", "--repo", REPO, "--pr", "7", "--body", "/prguide refresh", "--user", "mallory",
        "--sandbox", trial.sandbox.base_url,
    )  # fmt: skip
    assert code == 0 and trial.parsed(out)["detail"].startswith("refused, after ")


async def test_an_inline_review_comment_and_a_review_body_are_answered_too(trial):
    trial.sandbox.add_bundle(synthetic_bundle(7, repo=REPO))
    code, out, _ = await trial.send(
        "pull_request_review_comment.created", "--repo", REPO, "--pr", "7", "--body", "/prguide why", "--user", "alice",
        "--sandbox", trial.sandbox.base_url,
    )  # fmt: skip
    assert code == 0 and trial.parsed(out)["detail"].startswith("done, after "), out
    (written,) = trial.sandbox.state.repo("octo-org", "demo").pulls[7]["review_comments"][:1]
    assert [r.content for r in trial.sandbox.state.review_reactions[written["id"]]] == ["eyes", "+1"]
    replies = [c for c in trial.sandbox.state.repo("octo-org", "demo").pulls[7]["review_comments"] if c.get("in_reply_to_id")]
    assert [c["in_reply_to_id"] for c in replies] == [written["id"]]  # answered in its thread

    code, out, _ = await trial.send(
        "pull_request_review.submitted", "--repo", REPO, "--pr", "7", "--body", "/prguide why", "--user", "alice",
        "--sandbox", trial.sandbox.base_url,
    )  # fmt: skip
    assert code == 0 and trial.parsed(out)["detail"].startswith("done, after "), out


async def test_installation_created_backfills_the_repositories_named_or_listed(trial, monkeypatch):
    from bot.features import backfill

    monkeypatch.setattr(backfill, "pull_spacing", lambda budget, now: 0.0)  # pull jobs fall due at once
    trial.sandbox.state.add_merged_pulls("octo-org/history", 2)
    trial.sandbox.state.add_merged_pulls("octo-org/tools", 1)
    code, out, _ = await trial.send("installation.created", "--installation", "1", "--repo", "octo-org/history")
    assert code == 0
    line = trial.parsed(out)
    assert (line["event"], line["key"], line["status"]) == ("installation.created", None, "done")
    assert line["detail"].startswith("queued_1, after ")
    await wait_idle(trial.app)
    guides = trial.app[STATE].services.guides
    assert [n for n in (1, 2) if guides.get("octo-org/history", n)] == [1, 2] and guides.get("octo-org/tools", 1) is None

    # Without --repo the delivery has no "repositories": the app lists the installation's.
    code, out, _ = await trial.send("installation.created", "--installation", "1", "--account", "octo-org")
    assert code == 0 and trial.parsed(out)["detail"].startswith("queued_2, after ")
    await wait_idle(trial.app)
    assert guides.get("octo-org/tools", 1) is not None


async def test_an_installation_the_app_cannot_reach_is_reported_as_given_up(trial, tmp_path):
    code, out, err = await trial.send(
        "pull_request.closed", "--bundle", bundle_file(tmp_path), "--sandbox", trial.sandbox.base_url, "--installation", "7"
    )
    assert (code, err) == (1, "")
    line = trial.parsed(out)
    assert line["status"] == "gave up" and "installation 7 not found" in line["detail"]


async def test_a_failing_job_is_reported_at_its_first_failure_not_after_the_retries(trial, tmp_path):
    trial.sandbox.add_faults([{"path": r"/pulls/7/files", "status": 502, "times": None}])
    code, out, _ = await trial.send(
        "pull_request.closed", "--bundle", bundle_file(tmp_path), "--sandbox", trial.sandbox.base_url, "--timeout", "60"
    )
    assert code == 1
    line = trial.parsed(out)
    assert re.fullmatch(r"failed on attempt 1; attempt 2 in \d+ s", line["status"]), line
    assert "502" in line["detail"]
    job = trial.app[STATE].store.by_delivery(line["delivery"])
    assert (job["state"], job["attempts"]) == ("queued", 1)


async def test_deliveries_that_need_no_job_are_answered_in_one_line(trial, tmp_path):
    path = bundle_file(tmp_path)
    code, out, _ = await trial.send("pull_request.closed", "--bundle", path, "--unmerged")
    assert code == 0 and trial.parsed(out)["status"] == "ignored" and trial.parsed(out)["detail"] == "closed without merging"
    code, out, _ = await trial.send("issue_comment.created", "--repo", REPO, "--pr", "7", "--body", "thanks!")
    assert code == 0 and (trial.parsed(out)["status"], trial.parsed(out)["detail"]) == ("ignored", "no commands")
    code, out, _ = await trial.send("ping")
    assert code == 0 and trial.parsed(out)["status"] == "pong"
    assert trial.app[STATE].store.counts()["done"] == 0
    # An uninstall is a job (it cancels the installation's queued work), reported as one.
    code, out, _ = await trial.send("installation.deleted", "--installation", "3", "--repo", REPO)
    assert code == 0 and trial.parsed(out)["status"] == "done"


async def test_a_wrong_secret_is_refused_in_one_line(trial, tmp_path):
    trial.capsys.readouterr()
    argv = ["send", "ping", "--url", trial.url, "--secret", "not the secret"]
    code = await asyncio.to_thread(cli.main, argv)
    out, err = trial.capsys.readouterr()
    assert code == 1 and err == ""
    line = trial.parsed(out)
    assert (line["status"], line["detail"]) == ("refused 401", "X-Hub-Signature-256 does not match the body")


async def test_waiting_stops_at_the_timeout_with_what_is_known(trial, tmp_path):
    await trial.app[STATE].pool.stop()  # nothing runs: the job stays queued
    now = [1000.0]
    pauses: list[float] = []

    async def sleep(seconds: float) -> None:
        pauses.append(seconds)
        now[0] += seconds

    args = cli.build_parser().parse_args(
        ["send", "pull_request.closed", "--bundle", bundle_file(tmp_path), "--url", trial.url, "--secret", SECRET, "--timeout", "2"]
    )
    outcome = await send(args, sleep=sleep, clock=lambda: now[0])
    assert (outcome.status, outcome.ok, outcome.key) == ("still queued after 2 s", False, f"{REPO}#7")
    assert sum(pauses) == pytest.approx(2.0) and pauses[0] < pauses[1] <= 0.5  # soon at first, then less often


async def test_the_status_of_a_delivery_is_only_told_to_whoever_holds_the_secret(trial):
    await trial.send("installation.created", "--repo", REPO, "--delivery", "known-1")
    base = trial.url + "/deliveries/"
    async with aiohttp.ClientSession() as http:
        async with http.get(base + "known-1") as answer:
            assert answer.status == 401
        wrong = {"X-Hub-Signature-256": payloads.sign(SECRET, status_message("other"))}
        async with http.get(base + "known-1", headers=wrong) as answer:
            assert answer.status == 401
        right = {"X-Hub-Signature-256": payloads.sign(SECRET, status_message("known-1"))}
        async with http.get(base + "known-1", headers=right) as answer:
            job = await answer.json()
            assert answer.status == 200
            assert (job["delivery"], job["event"], job["action"], job["state"], job["outcome"]) == (
                "known-1", "installation", "created", "done", "succeeded",
            )  # fmt: skip
        unknown = {"X-Hub-Signature-256": payloads.sign(SECRET, status_message("never"))}
        async with http.get(base + "never", headers=unknown) as answer:
            assert answer.status == 404 and "never queued" in (await answer.json())["error"]


async def test_mistakes_are_one_line_and_no_traceback(trial, capsys):
    capsys.readouterr()
    unreachable = await asyncio.to_thread(cli.main, ["send", "ping", "--url", "http://127.0.0.1:9/webhook", "--secret", "s"])
    out, err = capsys.readouterr()
    assert unreachable == 1 and out == "" and err.count("\n") == 1 and err.startswith("prguide send: cannot send: ")
    no_secret = await asyncio.to_thread(cli.main, ["send", "ping", "--url", trial.url, "--secret", ""])
    out, err = capsys.readouterr()
    assert no_secret == 2 and err == "prguide send: no webhook secret: give --secret or set PRGUIDE_WEBHOOK_SECRET\n"
    missing = await asyncio.to_thread(cli.main, ["send", "issue_comment.created", "--repo", REPO, "--url", trial.url, "--secret", "s"])
    out, err = capsys.readouterr()
    assert missing == 2 and err.count("\n") == 1 and "needs --pr N" in err
    bad_file = await asyncio.to_thread(cli.main, ["send", "pull_request.closed", "--bundle", "/nonexistent.json", "--secret", "s"])
    out, err = capsys.readouterr()
    assert bad_file == 2 and err.count("\n") == 1 and "/nonexistent.json" in err and "Traceback" not in err


# --- the sandbox's own deliveries --------------------------------------------------------------------


async def test_a_comment_made_in_the_sandbox_reaches_the_app_as_githubs_delivery(trial):
    sandbox = trial.sandbox
    sandbox.add_bundle(synthetic_bundle(7, repo=REPO))
    sandbox.set_webhook(trial.url, SECRET)
    async with aiohttp.ClientSession(sandbox.base_url) as http:
        async with http.post("/_sandbox/comments", json={"repo": REPO, "number": 7, "user": "alice", "body": "/prguide why"}) as answer:
            made = await answer.json()
        assert answer.status == 201 and made["body"] == "/prguide why"
        delivery = made["delivery"]
        assert (delivery["event"], delivery["status"]) == ("issue_comment.created", 202)
        await wait_idle(trial.app)
        job = trial.app[STATE].store.by_delivery(delivery["id"])
        assert (job["key"], job["state"], job["outcome"], job["error"]) == (f"{REPO}#7", "done", "succeeded", "done")
        reactions = [r["content"] for r in sandbox.snapshot()["reactions"][str(made["id"])]]
        assert reactions == ["eyes", "+1"]
        assert any(c.user == "prguide[bot]" for c in sandbox.comments(REPO, 7))  # the answer to /prguide why

        # deliver: false keeps it to the sandbox; the app's own comments are never delivered.
        before = trial.app[STATE].store.counts()
        async with http.post("/_sandbox/comments", json={"repo": REPO, "number": 7, "user": "bob", "body": "/prguide why", "deliver": False}) as answer:
            assert answer.status == 201 and "delivery" not in await answer.json()
        assert trial.app[STATE].store.counts() == before

        sandbox.set_webhook(None)
        async with http.post("/_sandbox/comments", json={"repo": REPO, "number": 7, "user": "bob", "body": "x", "deliver": True}) as answer:
            assert answer.status == 400 and "no webhook" in (await answer.json())["message"]


async def test_the_sandboxs_delivery_has_githubs_shape(app_private_key, webhook_payload):  # noqa: F811
    real = webhook_payload("issue_comment", "created.with-installation.payload.json")
    async with start_sandbox(app_private_key, installations=[{"id": 4, "account": "octo-org"}]) as sandbox:
        sandbox.add_bundle(synthetic_bundle(7, repo=REPO))
        sandbox.add_bundle(synthetic_bundle(1, repo="elsewhere/demo"))
        from bot.sandbox.hooks import comment_payload

        comment = sandbox.state.create_comment("octo-org", "demo", 7, "/prguide why", user="alice")
        payload, installation_id = comment_payload(sandbox.state, comment)
        assert installation_id == 4 and payload["installation"]["id"] == 4
        assert set(real) <= set(payload)  # organization included: octo-org's repository
        assert set(real["issue"]) <= set(payload["issue"]) and set(real["comment"]) <= set(payload["comment"])
        assert payload["issue"]["pull_request"]["merged_at"] == "2024-05-01T10:00:00Z"
        assert payload["comment"]["id"] == comment.id and payload["sender"]["login"] == "alice"
        assert payload["repository"]["default_branch"] == "main"
        assert payload["comment"]["url"].startswith(sandbox.base_url)
        # Not installed there: GitHub sends the app nothing.
        elsewhere = sandbox.state.create_comment("elsewhere", "demo", 1, "/prguide why", user="alice")
        assert comment_payload(sandbox.state, elsewhere) is None


def test_the_sandbox_command_wants_the_secret_with_the_webhook(tmp_path, monkeypatch, app_private_key):  # noqa: F811
    from bot.sandbox.cli import build_sandbox

    key = tmp_path / "app.pem"
    key.write_bytes(app_private_key)
    monkeypatch.delenv("PRGUIDE_WEBHOOK_SECRET", raising=False)
    monkeypatch.delenv("GITHUB_WEBHOOK_SECRET", raising=False)
    args = cli.build_parser().parse_args(["sandbox", "--app-id", "1", "--app-key", str(key), "--webhook-url", "http://127.0.0.1:8080/webhook"])
    with pytest.raises(ValueError, match="needs the secret"):
        build_sandbox(args)
    monkeypatch.setenv("PRGUIDE_WEBHOOK_SECRET", "from the environment")
    hook = build_sandbox(args).state.webhook
    assert (hook.url, hook.secret) == ("http://127.0.0.1:8080/webhook", "from the environment")
    assert "from the environment" not in repr(hook)


def test_print_shows_the_payload_and_sends_nothing(capsys):
    code = cli.main(["send", "issue_comment.created", "--repo", REPO, "--pr", "7", "--body", "/prguide why", "--print", "--url", "http://127.0.0.1:9/x"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    payload = json.loads(out)
    args = cli.build_parser().parse_args(["send", "issue_comment.created", "--repo", REPO, "--pr", "7", "--body", "/prguide why"])
    assert set(payload) == set(build_payload(args)) and payload["comment"]["body"] == "/prguide why"


def test_a_status_tells_the_last_line_of_an_error_and_when_the_next_attempt_is_due():
    from bot.app.delivery_status import describe

    base = {"delivery_id": "d", "event": "pull_request", "action": "closed", "key": "o/r#1", "outcome": None, "attempts": 6,
            "not_before": 130.0, "created_at": 1.0, "updated_at": 2.0}  # fmt: skip
    parked = describe({**base, "state": "parked", "error": "Traceback (most recent call last):\n  File x\nRuntimeError: boom\n"}, now=100.0)
    assert (parked["state"], parked["reason"], parked["due_in_s"]) == ("parked", "RuntimeError: boom", None)
    waiting = describe({**base, "state": "queued", "attempts": 1, "error": "RetryLater: 502 from GitHub"}, now=100.0)
    assert (waiting["reason"], waiting["due_in_s"]) == ("RetryLater: 502 from GitHub", 30.0)


async def test_a_repository_visibility_change_stores_what_github_shows_now(trial):
    trial.sandbox.add_bundle(synthetic_bundle(7, repo=REPO))
    guides = trial.app[STATE].services.guides
    code, out, _ = await trial.send("repository.publicized", "--installation", "1", "--repo", REPO)
    line = trial.parsed(out)
    assert code == 0 and (line["event"], line["status"]) == ("repository.publicized", "done"), out
    assert line["detail"].startswith("public, after ") and guides.visibility(REPO) == "public"

    # Deleted: GitHub no longer shows it (404), so its guides are hidden.
    code, out, _ = await trial.send("repository.deleted", "--installation", "1", "--repo", "octo-org/gone")
    assert code == 0 and trial.parsed(out)["detail"].startswith("private, after "), out
    assert guides.visibility("octo-org/gone") == "private"
