"""Hostile and broken input, one test each: the right answer, nothing written, never a 500.

The real app serves ``POST /webhook`` on loopback and calls the GitHub sandbox; "nothing
written" is read from the sandbox's request log (no request at all for a refused
delivery) and the job table (nothing queued). Deliveries that are odd but real (a
deleted fork, a deleted author, control characters) get their guide, cleanly.
"""

from __future__ import annotations

import json
import logging
import re

import pytest
from loopback import (  # noqa: F401
    EMPTY_QUEUE,
    REPO,
    SECRET,
    SMALL_PR,
    app_private_key,
    delivery_headers,
    loopback,
    raw_post,
    running_app,
    settings_for,
)
from sandbox_helpers import start_sandbox

from bot.app.server import wait_idle
from bot.app.webhook import MAX_BODY_BYTES, sign
from bot.engine.build import build_guide
from bot.engine.marker import parse_marker
from bot.engine.rules import RuleError, load_rules
from bot.engine.snapshot import PullRequestSnapshot

pytestmark = pytest.mark.corpus

CONFIG = ".github/prguide.yml"


async def assert_refused(lb, resp, status: int, message: str) -> None:
    """``resp`` has ``status`` and a JSON error containing ``message``; nothing was queued or called."""
    assert resp.status == status, await resp.text()
    assert message in (await resp.json())["error"]
    await wait_idle(lb.app)
    assert lb.sandbox.requests == []
    assert lb.jobs() == EMPTY_QUEUE


def guide_of(lb, number: int, pull: dict):
    bundle = lb.bundles[number]
    snapshot = PullRequestSnapshot.from_github(pull, bundle["files"], bundle["reviews"], bundle["review_comments"])
    return build_guide(snapshot, load_rules())


# --- signatures -----------------------------------------------------------------------


async def test_missing_signature_is_401(loopback):
    resp = await loopback.deliver(loopback.payload(), headers={"X-Hub-Signature-256": None})
    await assert_refused(loopback, resp, 401, "missing X-Hub-Signature-256")


async def test_wrong_signature_is_401(loopback):
    resp = await loopback.deliver(loopback.payload(), secret="not the secret")
    await assert_refused(loopback, resp, 401, "does not match")


async def test_signature_of_another_body_is_401(loopback):
    payload = loopback.payload()
    body = json.dumps(payload).encode()
    headers = delivery_headers(body)
    payload["pull_request"]["title"] = "tampered"
    resp = await loopback.post(json.dumps(payload).encode(), headers)
    await assert_refused(loopback, resp, 401, "does not match")


async def test_sha1_only_signature_is_401(loopback):
    import hashlib
    import hmac

    body = json.dumps(loopback.payload()).encode()
    headers = delivery_headers(body)
    headers["X-Hub-Signature-256"] = None
    headers["X-Hub-Signature"] = "sha1=" + hmac.new(SECRET.encode(), body, hashlib.sha1).hexdigest()
    resp = await loopback.post(body, headers)
    await assert_refused(loopback, resp, 401, "missing X-Hub-Signature-256")


@pytest.mark.parametrize(
    "header",
    [
        "sha256=\u00e9\u00e9".encode(),  # UTF-8 bytes
        b"sha256=\xff\xfe" + b"0" * 62,  # not UTF-8 at all
        "sha256=０１２３".encode(),  # full-width digits
    ],
)
async def test_non_ascii_bytes_in_the_signature_header_are_401(loopback, header):
    body = json.dumps(loopback.payload()).encode()
    headers = (
        b"Content-Type: application/json\r\nX-GitHub-Event: pull_request\r\nX-GitHub-Delivery: d-1\r\n"
        b"X-Hub-Signature-256: " + header + b"\r\n"
    )
    assert await raw_post(loopback.client.host, loopback.client.port, headers, body) == 401
    await wait_idle(loopback.app)
    assert loopback.sandbox.requests == []
    assert loopback.jobs() == EMPTY_QUEUE


@pytest.mark.parametrize(
    "event, delivery",
    [
        (b"pull_request", b"d-\xe9\xff\xfe"),  # the delivery id would be the job's key
        (b"pull_request", "d-\u00e9".encode()),
        (b"pull_request", b"d 1"),
        (b"pull_request", b"d" * 200),
        (b"pull_request\xff", b"d-1"),
        (b"pull request", b"d-1"),
    ],
)
async def test_malformed_event_or_delivery_headers_are_400_not_500(loopback, event, delivery):
    body = json.dumps(loopback.payload()).encode()
    signature = sign(SECRET, body).encode()  # GitHub signs the body, not the headers
    headers = (
        b"Content-Type: application/json\r\nX-GitHub-Event: " + event + b"\r\n"
        b"X-GitHub-Delivery: " + delivery + b"\r\nX-Hub-Signature-256: " + signature + b"\r\n"
    )
    assert await raw_post(loopback.client.host, loopback.client.port, headers, body) == 400
    await wait_idle(loopback.app)
    assert loopback.sandbox.requests == []
    assert loopback.jobs() == EMPTY_QUEUE


# --- content type and body ------------------------------------------------------------


@pytest.mark.parametrize("content_type", ["application/x-www-form-urlencoded", "text/plain", "multipart/form-data", None])
async def test_wrong_content_type_is_415(loopback, content_type):
    resp = await loopback.deliver(loopback.payload(), headers={"Content-Type": content_type})
    await assert_refused(loopback, resp, 415, "application/json")


@pytest.mark.parametrize(
    "cut, message",
    [
        (0.5, "not valid JSON"),  # truncated in transit
        (0.0, "not valid JSON"),  # empty
    ],
)
async def test_truncated_body_is_400(loopback, cut, message):
    body = json.dumps(loopback.payload()).encode()
    resp = await loopback.deliver(body[: int(len(body) * cut)])
    await assert_refused(loopback, resp, 400, message)


@pytest.mark.parametrize(
    "body, message",
    [
        (b"payload=%7B%22action%22%3A%22closed%22%7D", "not valid JSON"),
        (b"<xml/>", "not valid JSON"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b"[1, 2, 3]", "not an object"),
        (b'"a string"', "not an object"),
        (b"null", "not an object"),
        (b'{"action": "closed", "pull_request": NaN}', "lacks"),
    ],
)
async def test_non_json_body_is_400(loopback, body, message):
    resp = await loopback.deliver(body)
    await assert_refused(loopback, resp, 400, message)


@pytest.mark.parametrize("field", ["pull_request", "repository", "installation"])
async def test_payload_missing_what_prguide_reads_is_400(loopback, field):
    payload = loopback.payload()
    del payload[field]
    resp = await loopback.deliver(payload)
    await assert_refused(loopback, resp, 400, field)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"pull_request": None}, "pull_request"),
        ({"pull_request": []}, "pull_request"),
        ({"repository": "verl-project/verl"}, "repository"),
        ({"installation": {"id": "1"}}, "installation.id"),
        ({"installation": {"id": True}}, "installation.id"),
        ({"action": ["closed"]}, "action"),
    ],
)
async def test_payload_fields_of_the_wrong_type_are_400(loopback, change, message):
    payload = loopback.payload()
    payload.update(change)
    resp = await loopback.deliver(payload)
    await assert_refused(loopback, resp, 400, message)


async def test_pull_request_without_a_number_or_repository_name_is_400(loopback):
    payload = loopback.payload()
    del payload["pull_request"]["number"]
    await assert_refused(loopback, await loopback.deliver(payload), 400, "number")
    payload = loopback.payload()
    payload["repository"]["full_name"] = "no-slash"
    await assert_refused(loopback, await loopback.deliver(payload), 400, "full_name")


@pytest.mark.parametrize("header", ["X-GitHub-Event", "X-GitHub-Delivery"])
async def test_missing_github_headers_are_400(loopback, header):
    resp = await loopback.deliver(loopback.payload(), headers={header: None})
    await assert_refused(loopback, resp, 400, header)


async def test_body_over_githubs_25_mb_cap_is_413(loopback):
    payload = loopback.payload(body="x" * MAX_BODY_BYTES)
    resp = await loopback.deliver(payload)
    await assert_refused(loopback, resp, 413, "cap")
    metrics = await (await loopback.client.get("/metrics")).text()
    assert 'prguide_webhook_deliveries_total{event="unverified",outcome="too_large"} 1.0' in metrics


async def test_body_exactly_at_the_cap_is_accepted(loopback):
    payload = loopback.payload(body="")
    padding = MAX_BODY_BYTES - len(json.dumps(payload).encode())
    payload["pull_request"]["body"] = "x" * padding
    body = json.dumps(payload).encode()
    assert len(body) == MAX_BODY_BYTES
    resp = await loopback.deliver(body)
    assert resp.status == 202
    await wait_idle(loopback.app)
    (comment,) = loopback.comments()
    assert comment.body.count("x" * 200) <= 1  # the body is quoted briefly, if at all


# --- odd but real pull requests: the guide is written, cleanly ----------------------------


async def test_head_repo_null_after_the_fork_was_deleted(loopback):
    payload = loopback.payload()
    payload["pull_request"]["head"]["repo"] = None
    resp = await loopback.deliver(payload)
    assert resp.status == 202
    await wait_idle(loopback.app)
    (comment,) = loopback.comments()
    assert comment.body == guide_of(loopback, SMALL_PR, payload["pull_request"]).markdown
    assert loopback.jobs()["done"] == 1


@pytest.mark.parametrize(
    "user",
    [None, {"login": "ghost", "id": 10137, "type": "User"}, {"login": None}, {}],
    ids=["null", "ghost", "login-null", "empty"],
)
async def test_author_null_or_ghost(loopback, user):
    payload = loopback.payload()
    payload["pull_request"]["user"] = user
    payload["sender"] = user
    resp = await loopback.deliver(payload)
    assert resp.status == 202
    await wait_idle(loopback.app)
    (comment,) = loopback.comments()
    assert comment.body == guide_of(loopback, SMALL_PR, payload["pull_request"]).markdown
    assert sorted(loopback.labels()) == sorted(guide_of(loopback, SMALL_PR, payload["pull_request"]).labels)


async def test_control_characters_in_title_and_body_never_reach_the_comment(loopback):
    nasty = "Fix\x00 the \x1b[31mred\x1b[0m bug\x07\x08\x7f \u202egnp.exe\u202c @admin <!-- prguide:v1 {} -->"
    payload = loopback.payload(title=nasty, body=nasty + "\r\n\x0c" + nasty)
    resp = await loopback.deliver(payload)
    assert resp.status == 202
    await wait_idle(loopback.app)
    (comment,) = loopback.comments()
    assert not re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u202a-\u202e]", comment.body)
    # The title is not restated (GitHub shows it above the comment); the summary stays clean too.
    assert "\x1b" not in comment.body and "\u202e" not in comment.body
    assert comment.body.count("<!-- prguide:v1") == 1  # the forged marker is text, not a marker
    assert parse_marker(comment.body) is not None
    assert "@admin" not in comment.body


# --- configuration written by the repository ----------------------------------------------


async def test_invalid_repository_config_still_gets_a_guide_and_says_why_once(loopback, caplog):
    caplog.set_level(logging.WARNING)
    loopback.sandbox.set_file(REPO, CONFIG, "lang: [zh\nrules: {\n")
    await loopback.merged(delivery="broken-config")

    (comment,) = loopback.comments()
    assert comment.body.count(CONFIG) == 1
    assert loopback.labels()  # the default rules still applied
    warnings = [r for r in caplog.records if CONFIG in r.getMessage()]
    assert len(warnings) == 1

    # A redelivery of the merge changes nothing and reports nothing new on GitHub.
    writes = len(loopback.writes())
    await loopback.merged(delivery="broken-config-again")
    assert len(loopback.comments()) == 1 and len(loopback.writes()) == writes
    assert loopback.comments()[0].body.count(CONFIG) == 1


async def test_config_that_is_not_utf8_or_not_a_file_still_gets_a_guide(loopback):
    loopback.sandbox.set_file(REPO, CONFIG, b"lang: \xff\xfe\n")
    await loopback.merged(delivery="binary-config")
    (comment,) = loopback.comments()
    assert "UTF-8" in comment.body and CONFIG in comment.body


async def test_catastrophic_regex_in_a_repository_rule_is_refused_and_reported(loopback):
    loopback.sandbox.set_file(
        REPO, CONFIG, 'rules:\n  - id: hang\n    title: "(a+)+$"\n    labels: [never]\n'
    )
    await loopback.merged(delivery="redos", title="a" * 5000 + "!")
    (comment,) = loopback.comments()
    assert "exponential time" in comment.body and CONFIG in comment.body
    assert "never" not in loopback.labels()
    assert loopback.labels()  # the shipped rules still applied


async def test_slow_regex_that_passes_the_check_runs_out_of_time_not_the_job(loopback, caplog):
    caplog.set_level(logging.WARNING)
    loopback.sandbox.set_file(
        REPO, CONFIG, 'rules:\n  - id: slow\n    title: "(a|aa)+$"\n    labels: [slow-title]\n'
    )
    await loopback.merged(delivery="slow", title="a" * 60 + "!")
    (comment,) = loopback.comments()
    assert "slow-title" not in loopback.labels()
    assert any("ran out of time" in r.getMessage() for r in caplog.records)
    assert loopback.jobs()["done"] == 1


async def test_catastrophic_regex_in_the_servers_rules_stops_start_up_with_its_place(app_private_key, tmp_path):  # noqa: F811
    rules = tmp_path / "team.yml"
    rules.write_text('rules:\n  - id: hang\n    body: "(\\\\w+\\\\s*)*$"\n    labels: [never]\n', encoding="utf-8")
    async with start_sandbox(app_private_key) as sandbox:
        settings = settings_for(sandbox, app_private_key, tmp_path, rules=(rules,))
        with pytest.raises(RuleError) as caught:
            async with running_app(settings):
                pass
    assert f"{rules}:3" in str(caught.value) or "team.yml:3" in str(caught.value)
    assert "exponential" in str(caught.value)


async def test_malformed_pull_request_object_is_read_from_github_instead(loopback):
    payload = loopback.payload()
    payload["pull_request"].update(labels=True, user="alice", base=["main"])
    resp = await loopback.deliver(payload)
    assert resp.status == 202
    await wait_idle(loopback.app)
    (comment,) = loopback.comments()
    assert comment.body == guide_of(loopback, SMALL_PR, loopback.bundles[SMALL_PR]["pull"]).markdown
    gets = [r for r in loopback.sandbox.requests if r["method"] == "GET" and r["path"] == f"/repos/{REPO}/pulls/{SMALL_PR}"]
    assert len(gets) == 1
