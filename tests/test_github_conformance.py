"""The sandbox answers, and the tests, demo, ``prguide send`` and the sandbox deliver, what GitHub documents.

Checked against GitHub's own published descriptions, pinned in ``tests/data/github_schemas.json``
(the npm packages ``@octokit/openapi`` and ``@octokit/openapi-webhooks``; see
``tests/schema_check.py`` and ``tools/github_schemas.py``):

- every answer of the sandbox in a typical run (the real app guiding a merge, backfilling
  an installation, running commands from comments, a review and a review comment; then
  every other endpoint and the usual refusals called directly) is valid against the
  response schema of its operation and status;
- every webhook payload the builders make (the sandbox's ``*_event`` methods,
  ``bot.demo.merged_event``, every delivery ``prguide send`` can send, the sandbox's
  webhook, the tests' own builders) is valid against the schema of its event.
"""

from __future__ import annotations

import json
import subprocess
import types
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from loopback import Sleeps, delivery_headers, pr_delivery, running_app, settings_for, shipped_rules
from sandbox_helpers import APP_ID, app_private_key, comment_payload, make_app_jwt, start_sandbox, synthetic_bundle  # noqa: F401
from schema_check import operation_of, pinned, response_problems, webhook_event_key, webhook_problems

from bot import demo, payloads
from bot.app.server import wait_idle
from bot.cli import build_parser
from bot.github_objects import FULL_ONLY_PULL_FIELDS
from bot.sandbox import SandboxState
from bot.sandbox.hooks import comment_payload as comment_payload_of
from bot.send import build_payload

ROOT = Path(__file__).resolve().parents[1]
DEMO, HISTORY = "octo-org/demo", "octo-org/history"
MERGED, OPEN = 7, 8
MAINTAINER, STRANGER, READER = "mo", "sam", "rita"


def recorder(sandbox: Any) -> list[tuple[str, str, int, Any]]:
    """Keep every GitHub-API answer of ``sandbox`` as ``(method, path, status, JSON body or None)``."""
    seen: list[tuple[str, str, int, Any]] = []

    def watch(request: web.Request, response: web.StreamResponse) -> None:
        body = getattr(response, "body", None)
        kind = response.headers.get("Content-Type", "")
        if body and "json" in kind and "vnd.github.raw" not in kind:
            value = json.loads(body)
        elif body:
            return  # raw file bytes ("application/vnd.github.raw+json"): no JSON schema applies
        else:
            value = None
        seen.append((request.method, request.path_qs, response.status, value))

    sandbox.watchers.append(watch)
    return seen


async def deliver(client: Any, event: str, payload: dict, delivery: str) -> int:
    """Post a signed delivery to the app and wait until its jobs are done; the answer's status."""
    body = json.dumps(payload).encode()
    resp = await client.post("/webhook", data=body, headers=delivery_headers(body, event=event, delivery=delivery))
    await wait_idle(client.app)
    return resp.status


async def app_run(sandbox: Any, key: bytes, tmp_path: Path) -> None:
    """The real app against ``sandbox``: a merge, an installation's backfill, commands in a
    comment, an edit, a review and a review comment, as GitHub would deliver them."""
    state = sandbox.state
    settings = settings_for(sandbox, key, tmp_path)
    async with running_app(settings, rules=shipped_rules(), client_options={"sleep": Sleeps()}) as client:
        owner, name = DEMO.split("/")
        assert await deliver(client, "pull_request", state.pull_request_event(owner, name, MERGED), "merge") == 202
        assert await deliver(client, "installation", state.installation_event(1), "installed") == 202
        said = [
            (MAINTAINER, "/prguide refresh"),
            (STRANGER, "/prguide label add shiny"),
            (MAINTAINER, "/prguide label add docs\n/prguide label remove docs\n/prguide why"),
            (READER, "/prguide help"),
        ]
        for n, (user, text) in enumerate(said):
            comment = state.create_comment(owner, name, MERGED, text, user=user)
            assert await deliver(client, "issue_comment", state.issue_comment_event(comment), f"c-{n}") in (200, 202)
        before = comment.body
        state.edit_comment(owner, name, comment.id, "/prguide lang zh")
        edited = state.issue_comment_event(comment, "edited", before=before)
        assert await deliver(client, "issue_comment", edited, "edit") == 202
        review = state.create_review(owner, name, MERGED, "Looks right.\n/prguide refresh", user=MAINTAINER)
        assert await deliver(client, "pull_request_review", state.review_event(owner, name, MERGED, review["id"]), "r") == 202
        first = state.create_review_comment(owner, name, MERGED, "Why this?", user=READER)
        asked = state.create_review_comment(owner, name, MERGED, "/prguide label add docs", user=MAINTAINER, in_reply_to=first["id"])
        inline = state.review_comment_event(owner, name, asked["id"])
        assert await deliver(client, "pull_request_review_comment", inline, "rc") == 202
    assert len(sandbox.comments(DEMO, MERGED)) >= 3 and "docs" in sandbox.labels(DEMO, MERGED)


async def direct_calls(sandbox: Any, key: bytes) -> None:
    """Every endpoint the sandbox serves, called once or more, and the refusals GitHub gives."""
    base = sandbox.base_url
    repo = f"/repos/{DEMO}"
    async with aiohttp.ClientSession(base) as http:
        app = {"Authorization": f"Bearer {make_app_jwt(key)}"}

        async def call(method: str, path: str, auth: dict, expect: int, **kwargs: Any) -> Any:
            async with http.request(method, path, headers=auth, allow_redirects=False, **kwargs) as resp:
                assert resp.status == expect, (method, path, resp.status, await resp.text())
                return await resp.json() if resp.content_type.endswith("json") and resp.status != 204 else None

        for path in ("/app", "/app/installations", "/app/installations/1", f"{repo}/installation"):
            await call("GET", path, app, 200)
        token = (await call("POST", "/app/installations/1/access_tokens", app, 201))["token"]
        inst = {"Authorization": f"token {token}"}
        for path in (
            "/installation/repositories", repo, f"{repo}/pulls?state=all", f"{repo}/pulls/{MERGED}",
            f"{repo}/pulls/{MERGED}/files", f"{repo}/pulls/{MERGED}/reviews", f"{repo}/pulls/{MERGED}/comments",
            f"{repo}/issues/{MERGED}", f"{repo}/issues/{MERGED}/comments", f"{repo}/issues/{MERGED}/labels",
            f"{repo}/issues/{MERGED}/events", f"{repo}/labels", f"{repo}/labels/docs", f"{repo}/contents/README.md",
            f"{repo}/collaborators/{MAINTAINER}/permission", f"{repo}/collaborators/{STRANGER}/permission",
        ):  # fmt: skip
            await call("GET", path, inst, 200)
        review_comment = (await call("GET", f"{repo}/pulls/{MERGED}/comments", inst, 200))[0]["id"]
        await call("GET", f"{repo}/pulls/comments/{review_comment}", inst, 200)
        await call("POST", f"{repo}/pulls/comments/{review_comment}/reactions", inst, 201, json={"content": "heart"})
        await call("POST", f"{repo}/pulls/{MERGED}/comments/{review_comment}/replies", inst, 201, json={"body": "Noted."})
        comment = await call("POST", f"{repo}/issues/{MERGED}/comments", inst, 201, json={"body": "Hello."})
        at = f"{repo}/issues/comments/{comment['id']}"
        await call("GET", at, inst, 200)
        await call("PATCH", at, inst, 200, json={"body": "Hello again."})
        await call("POST", f"{at}/reactions", inst, 201, json={"content": "rocket"})
        await call("POST", f"{at}/reactions", inst, 200, json={"content": "rocket"})
        await call("GET", f"{at}/reactions", inst, 200)
        await call("POST", f"{repo}/labels", inst, 201, json={"name": "area/x", "color": "00ff00", "description": "X"})
        await call("PATCH", f"{repo}/labels/area/x", inst, 200, json={"color": "0000ff"})
        await call("POST", f"{repo}/issues/{MERGED}/labels", inst, 200, json={"labels": ["area/x"]})
        await call("PUT", f"{repo}/issues/{MERGED}/labels", inst, 200, json={"labels": ["area/x", "docs"]})
        await call("DELETE", f"{repo}/issues/{MERGED}/labels/area/x", inst, 200)
        await call("DELETE", at, inst, 204)
        # What GitHub refuses, and how.
        await call("GET", f"{repo}/pulls/999", inst, 404)
        await call("GET", f"{repo}/pulls?state=merged", inst, 422)
        await call("POST", f"{repo}/labels", inst, 422, json={"name": "bad", "color": "red"})
        await call("POST", f"{repo}/issues/{MERGED}/comments", inst, 422, json={})
        await call("DELETE", f"{repo}/issues/{MERGED}/labels/absent", inst, 404)
        await call("GET", "/app", inst, 401)
        await call("GET", f"{repo}/pulls/{MERGED}", {"Authorization": "token ghs_unknown"}, 401)
        etag = (await http.get(f"{repo}/pulls/{MERGED}", headers=inst)).headers["ETag"]
        await call("GET", f"{repo}/pulls/{MERGED}", {**inst, "If-None-Match": etag}, 304)
        sandbox.add_faults([{"method": "GET", "path": f"{repo}/pulls/{OPEN}/files", "status": 502, "times": 1}])
        await call("GET", f"{repo}/pulls/{OPEN}/files", inst, 502)
        sandbox.set_permissions({"issues": "read", "pull_requests": "read"})
        await call("POST", f"{repo}/issues/{MERGED}/comments", inst, 403, json={"body": "No."})
        sandbox.move_repo(HISTORY)
        await call("GET", f"/repos/{HISTORY}/pulls/1", inst, 301)
        record = sandbox.state.repo(*HISTORY.split("/"))
        await call("GET", f"/repositories/{record.id}/pulls/1", inst, 200)
        await call("DELETE", "/installation/token", inst, 204)


def served_sandbox_bundles() -> list[dict]:
    """A merged pull request with three files and an open one, in :data:`DEMO`."""
    merged = synthetic_bundle(MERGED, repo=DEMO, files=3)
    opened = synthetic_bundle(OPEN, repo=DEMO, files=1)
    opened["pull"].update(state="open", merged=False, merged_at=None)
    return [merged, opened]


async def test_every_answer_of_a_typical_run_is_what_github_documents(app_private_key, tmp_path):
    roles = {MAINTAINER: "maintain", READER: "read"}
    async with start_sandbox(app_private_key, bundles=served_sandbox_bundles(), collaborators=roles) as sandbox:
        sandbox.state.add_merged_pulls(HISTORY, 3)
        sandbox.set_file(DEMO, "README.md", "# Demo\n")
        seen = recorder(sandbox)
        await app_run(sandbox, app_private_key, tmp_path)
        await direct_calls(sandbox, app_private_key)

    checked: dict[tuple, list[str]] = {}  # an answer repeated word for word is checked once
    for method, path, status, body in seen:
        key = (method, operation_of(method, path), status, json.dumps(body, sort_keys=True))
        if key not in checked:
            checked[key] = [f"{method} {path} {status}: {why}" for why in response_problems(method, path, status, body)]
    problems = [problem for found in checked.values() for problem in found]
    assert problems == [], f"{len(problems)} problems in {len(seen)} answers:\n" + "\n".join(problems[:20])
    operations = {operation_of(m, p) for m, p, s, _ in seen if 200 <= s < 300}
    assert operations == set(pinned()["rest"]["operations"])  # every operation answered, and checked, at least once
    statuses = {s for _, _, s, _ in seen}
    assert {200, 201, 204, 301, 304, 401, 403, 404, 422, 502} <= statuses
    assert len(seen) > 100


def test_answers_that_break_githubs_schema_are_caught():
    # The check itself: a user object as the sandbox used to nest it (7 of 18 fields) is refused.
    short_user = {"login": "mo", "id": 1, "node_id": "x", "url": "u", "html_url": "h", "type": "User", "site_admin": False}
    comment = SandboxState(app_id=1)
    comment.add_bundle(synthetic_bundle(1))
    body = comment.comment_json(comment.create_comment("octo-org", "demo", 1, "Hi.", user="mo"))
    path = "/repos/octo-org/demo/issues/comments/1"
    assert response_problems("GET", path, 200, body) == []
    assert any("avatar_url" in p for p in response_problems("GET", path, 200, {**body, "user": short_user}))
    assert response_problems("GET", "/repos/o/r/pulls/1", 200, {"number": 1})  # a bundle's bare pull request
    assert operation_of("GET", "/repositories/12/pulls/comments/5") == "GET /repos/{owner}/{repo}/pulls/comments/{comment_id}"


# ----- webhook payloads ---------------------------------------------------------------------


def send_payloads(tmp_path: Path, state: SandboxState) -> list[tuple[str, dict]]:
    """``(event, payload)`` for every ``event.action`` ``prguide send`` can send (:data:`bot.payloads.EVENTS`),
    built as ``prguide send ... --print`` builds it: from options alone, from a bundle, and from what
    a sandbox (``state``) serves, as ``--sandbox`` reads it."""
    bundle = synthetic_bundle(9, repo=DEMO)
    path = tmp_path / "send-9.json"
    path.write_text(json.dumps(bundle), encoding="utf-8")
    owner, name = DEMO.split("/")
    record = state.repo(owner, name)
    served = state.create_comment(owner, name, MERGED, "/prguide why", user=MAINTAINER)
    prepared = {
        "pull": state.pull_json(record, MERGED),
        "repository": state.repo_json(record),
        "installation": 1,
        "comment": state.comment_json(served),
    }
    comment = ["--repo", "octo/demo", "--pr", "3", "--body", "/prguide why", "--user", "alice"]
    runs: list[tuple[list[str], dict | None]] = [
        (["ping", "--app-id", "42", "--url", "http://127.0.0.1:9/webhook", "--sender", "octocat"], None),
        (["pull_request.closed", "--bundle", str(path), "--installation", "12"], None),
        (["pull_request.closed", "--bundle", str(path), "--unmerged"], None),
        (["pull_request.closed", "--bundle", str(path), "--repo", "elsewhere/place"], None),
        (["pull_request.closed", "--bundle", str(path)], prepared),
        (["issue_comment.created", *comment], None),
        (["issue_comment.created", *comment, "--pr-state", "open"], None),
        (["issue_comment.edited", *comment, "--previous-body", "hi", "--pr-state", "closed"], None),
        (["issue_comment.created", "--repo", DEMO, "--pr", str(MERGED), "--body", "/prguide why"], prepared),
        (["pull_request_review.submitted", *comment], None),
        (["pull_request_review.submitted", "--bundle", str(path), "--body", "/prguide why"], None),
        (["pull_request_review_comment.created", *comment, "--comment-id", "9"], None),
        (["pull_request_review_comment.created", "--repo", DEMO, "--pr", str(MERGED), "--body", "x"], {**prepared, "comment": None}),
        (["installation.created", "--repo", "octo-org/a", "--repo", "octo-org/b", "--account-type", "Organization"], None),
        (["installation.created", "--account", "octo-org"], None),
        (["installation.deleted", "--repo", "octo/a"], None),
        (["installation.suspend", "--repo", "octo/a"], None),
        (["installation.unsuspend", "--repo", "octo/a"], None),
        (["installation.new_permissions_accepted", "--account", "octo"], None),
        (["installation_repositories.added", "--repo", "octo-org/c", "--sender", "mo"], None),
        (["installation_repositories.removed", "--repo", "octo-org/c"], None),
        (["repository.privatized", "--repo", "octo-org/a", "--installation", "3"], None),
        (["repository.publicized", "--repo", "octo/a", "--account-type", "User"], None),
        (["repository.deleted", "--repo", "octo-org/a", "--sender", "mo"], None),
        (["repository.renamed", "--repo", "octo-org/b", "--former", "octo-org/a"], None),
        (["repository.transferred", "--repo", "octo-org/a", "--former", "octo/a", "--account-type", "User"], None),
    ]
    out = []
    for argv, given in runs:
        args = build_parser().parse_args(["send", *argv, "--print"])
        out.append((argv[0].split(".")[0], build_payload(args, prepared=given)))
    return out


def git_commit_bundle(tmp_path: Path) -> dict:
    """What ``prguide demo`` replays for a repository without merged pull requests: its latest commit."""
    git = ["git", "-C", str(tmp_path), "-c", "user.name=Ada", "-c", "user.email=ada@example.com"]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "app.py").write_text("print('hi')\n", encoding="utf-8")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "Say hi"], check=True)
    return demo.latest_commit_bundle(tmp_path)


def built_payloads(tmp_path: Path) -> list[tuple[str, str, dict]]:
    """``(builder, event, payload)`` for every builder of webhook payloads, each action it makes."""
    import test_backfill_sandbox as backfill_tests
    import test_commands_decide as decide_tests
    import test_commands_sandbox as command_tests
    import test_webhook_fuzz as fuzz_tests

    state = SandboxState(app_id=APP_ID, installations=[{"id": 1}, {"id": 2, "account": "octo-org", "account_type": "User"}])
    for bundle in served_sandbox_bundles():
        state.add_bundle(bundle)
    state.add_merged_pulls(HISTORY, 2)
    owner, name = DEMO.split("/")
    out: list[tuple[str, str, dict]] = []

    def add(builder: str, event: str, payload: dict) -> None:
        out.append((builder, event, payload))

    # The sandbox's own deliveries.
    add("state.pull_request_event", "pull_request", state.pull_request_event(owner, name, MERGED))
    add("state.pull_request_event", "pull_request", state.pull_request_event(owner, name, OPEN, "opened"))
    add("state.pull_request_event", "pull_request", state.pull_request_event(owner, name, OPEN, "synchronize", before="a" * 40, after="b" * 40))
    comment = state.create_comment(owner, name, MERGED, "/prguide help", user=MAINTAINER)
    add("state.issue_comment_event", "issue_comment", state.issue_comment_event(comment))
    add("state.issue_comment_event", "issue_comment", state.issue_comment_event(comment, "edited", before="Hi."))
    add("state.issue_comment_event", "issue_comment", state.issue_comment_event(comment, "edited"))
    bot = state.create_comment(owner, name, OPEN, "Guide.", user=state.bot_login, user_type="Bot")
    add("state.issue_comment_event", "issue_comment", state.issue_comment_event(bot))
    review = state.create_review(owner, name, MERGED, "/prguide refresh", user=MAINTAINER, state="APPROVED")
    add("state.review_event", "pull_request_review", state.review_event(owner, name, MERGED, review["id"]))
    first = state.create_review_comment(owner, name, MERGED, "Hm.", user=READER)
    reply = state.create_review_comment(owner, name, MERGED, "/prguide why", user=MAINTAINER, in_reply_to=first["id"])
    for made in (first, reply):
        add("state.review_comment_event", "pull_request_review_comment", state.review_comment_event(owner, name, made["id"]))
    for action in ("created", "deleted", "suspend", "unsuspend", "new_permissions_accepted"):
        add("state.installation_event", "installation", state.installation_event(1, action))
    add("state.installation_event", "installation", state.installation_event(2))
    add("state.installation_repositories_event", "installation_repositories", state.installation_repositories_event(2, added=[HISTORY]))
    add("state.installation_repositories_event", "installation_repositories", state.installation_repositories_event(2, removed=["octo-org/gone"]))
    add("state.ping_event", "ping", state.ping_event())

    # bot.demo, prguide send and the sandbox's webhook: a bundle's pull request and whatever repository they know.
    served = SandboxState(app_id=APP_ID)
    for bundle in (*served_sandbox_bundles(), git_commit_bundle(tmp_path)):
        full_name = served.add_bundle(bundle)
        repository = served.repo_json(served.repo(*full_name.split("/")))
        add("demo.merged_event", "pull_request", demo.merged_event(bundle["pull"], repository, installation_id=1))
    sent = send_payloads(tmp_path, state)
    for event, payload in sent:
        add("prguide send", event, payload)
    assert {webhook_event_key(e, p) for e, p in sent} == set(payloads.EVENTS)  # every delivery it can send
    made = comment_payload_of(state, state.create_comment(owner, name, MERGED, "/prguide help", user=READER))
    assert made is not None and made[0]["installation"]["id"] == made[1]
    add("sandbox.hooks.comment_payload", "issue_comment", made[0])

    # The tests' own builders.
    merged = synthetic_bundle(11, repo="verl-project/verl")
    add("loopback.pr_delivery", "pull_request", pr_delivery(merged))
    add("loopback.pr_delivery", "pull_request", pr_delivery(merged, merged=False, installation=7))
    add("sandbox_helpers.comment_payload", "issue_comment", comment_payload("/prguide help"))
    add("sandbox_helpers.comment_payload", "issue_comment", comment_payload("x", action="edited", before="y", merged_at=None, state="open"))
    for label, payload, _ in decide_tests.IGNORED:
        add(f"test_commands_decide.comment_payload ({label})", "issue_comment", payload)
    for event, payload in fuzz_tests.VALID.items():
        add("test_webhook_fuzz.VALID", event, payload)
    box = types.SimpleNamespace(state=state)
    add("test_backfill_sandbox.installation_created", "installation", backfill_tests.installation_created(box))
    add("test_backfill_sandbox.merge_payload", "pull_request", backfill_tests.merge_payload(box, 2))
    harness = types.SimpleNamespace(sandbox=types.SimpleNamespace(state=state))
    add("test_commands_sandbox.Harness.payload", "issue_comment", command_tests.Harness.payload(harness, comment, "created"))
    review = command_tests.review_payload(harness, MAINTAINER, "/prguide help", repo=DEMO, number=MERGED)
    add("test_commands_sandbox.review_payload", "pull_request_review", review)
    inline = command_tests.review_comment_payload(harness, reply["id"], repo=DEMO)
    add("test_commands_sandbox.review_comment_payload", "pull_request_review_comment", inline)
    return out


def test_every_webhook_payload_the_tests_demo_and_tools_build_is_what_github_sends(tmp_path):
    payloads = built_payloads(tmp_path)

    problems = [f"{b} {webhook_event_key(e, p)}: {why}" for b, e, p in payloads for why in webhook_problems(e, p)]
    assert problems == [], f"{len(problems)} problems in {len(payloads)} payloads:\n" + "\n".join(problems[:20])
    assert {webhook_event_key(e, p) for _, e, p in payloads} == set(pinned()["webhooks"]["events"])
    # Review events carry the pull request as GitHub does there: merged_at, never merged.
    for _, event, payload in payloads:
        if event.startswith("pull_request_review"):
            assert "merged_at" in payload["pull_request"]
            assert not set(FULL_ONLY_PULL_FIELDS) & set(payload["pull_request"]), event


def test_payloads_built_on_githubs_own_examples_conform(webhook_payload):
    import test_server

    payload = test_server.merged_payload(webhook_payload)
    assert webhook_problems("pull_request", payload) == []
    assert payload["pull_request"]["merged"] is True and payload["pull_request"]["merged_at"]


def test_the_pinned_schemas_name_their_source_packages():
    sources = pinned()["sources"]
    assert (sources["rest"]["package"], sources["webhooks"]["package"]) == ("@octokit/openapi", "@octokit/openapi-webhooks")
    assert sources["rest"]["version"] and sources["webhooks"]["version"]
    assert (ROOT / "tools" / "github_schemas.py").exists()
