"""The GitHub App's rough edges, over loopback against the sandbox: an optional read or a
refused secondary write never costs the guide, odd payloads, skewed clocks, moved
repositories, credentials GitHub refuses, and what the operator is told about each.
"""

from __future__ import annotations

import json
import logging
import re

import pytest
from loopback import REPO, SMALL_PR, delivery_headers, loopback, pr_delivery, running_app, settings_for, start_loopback  # noqa: F401
from sandbox_helpers import app_private_key, generate_private_key_pem, start_sandbox  # noqa: F401

from bot.app.server import STATE, wait_idle
from bot.engine.marker import parse_marker
from bot.sandbox.auth import Authenticator

pytestmark = pytest.mark.corpus


def guide_comments(lb, number: int = SMALL_PR) -> list:
    return [c for c in lb.comments(number) if c.user == "prguide[bot]" and parse_marker(c.body)]


# ----- webhook secret -------------------------------------------------------------


async def test_secret_with_surrounding_whitespace_is_warned_about_at_start(app_private_key, load_bundle_json, tmp_path, caplog):  # noqa: F811
    caplog.set_level(logging.WARNING)
    bundles = {SMALL_PR: load_bundle_json(SMALL_PR)}
    secret = " padded secret\n\n"
    async with start_loopback(app_private_key, tmp_path, bundles, settings={"webhook_secret": secret}) as lb:
        resp = await lb.deliver(lb.payload(), secret=secret)
        assert resp.status == 202
    warnings = [r.getMessage() for r in caplog.records if "GITHUB_WEBHOOK_SECRET" in r.getMessage()]
    assert len(warnings) == 1
    assert "padded secret" not in "\n".join(r.getMessage() for r in caplog.records)


# ----- installation changes ---------------------------------------------------------


@pytest.mark.parametrize(
    ("event", "action"),
    [("installation", "new_permissions_accepted"), ("installation_repositories", "added"), ("installation_repositories", "removed")],
)
async def test_new_permissions_or_repositories_drop_the_cached_token(loopback, event, action):  # noqa: F811
    await loopback.merged(delivery="before")
    auth = loopback.state.services.auth
    assert auth.token_requests == 1
    requests_before = len(loopback.sandbox.requests)

    state = loopback.sandbox.state
    if event == "installation":
        payload = state.installation_event(1, action)
    else:
        # A repository the sandbox does not serve: its backfill finds nothing to read.
        payload = state.installation_repositories_event(1, **{action: ["octo-org/elsewhere"]})
    resp = await loopback.deliver(payload, delivery="changed", event=event)
    if action in ("added", "removed"):
        # Added repositories are also backfilled, removed ones have their work cancelled
        # (bot/features/backfill.py): queued after the token is dropped.
        assert resp.status == 202
        await wait_idle(loopback.app)
    else:
        assert resp.status == 200 and "token forgotten" in await resp.text()
        assert len(loopback.sandbox.requests) == requests_before

    # The next job asks for a token carrying the new permissions and repositories.
    await loopback.merged(7422, delivery="after")
    assert auth.token_requests == 2


# ----- metrics ------------------------------------------------------------------------


def metric_lines(text: str, name: str) -> dict[str, float]:
    return {line.split(" ")[0]: float(line.split(" ")[1]) for line in text.splitlines() if line.startswith(name)}


async def test_the_404_of_a_missing_config_is_counted_apart_from_api_errors(loopback):
    await loopback.merged()
    contents = [r for r in loopback.sandbox.requests if "/contents/" in r["path"]]
    # The repository has no .github/prguide.yml, nor .github/prguide.yaml.
    assert [(r["path"].split("?")[0].rsplit("/", 1)[-1], r["status"]) for r in contents] == [("prguide.yml", 404), ("prguide.yaml", 404)]

    text = await (await loopback.client.get("/metrics")).text()
    assert metric_lines(text, "prguide_github_api_errors_total") == {}
    assert metric_lines(text, "prguide_github_api_expected_errors_total") == {
        'prguide_github_api_expected_errors_total{status="404"}': 2.0
    }
    assert metric_lines(text, "prguide_github_api_requests_total")['prguide_github_api_requests_total{status="404"}'] == 2.0

    # A 404 nobody expected (the pull request's files are gone) is still an error.
    loopback.sandbox.add_faults([{"method": "GET", "path": r"/pulls/\d+/files", "status": 404}])
    await loopback.merged(7422, delivery="gone")
    text = await (await loopback.client.get("/metrics")).text()
    assert metric_lines(text, "prguide_github_api_errors_total") == {'prguide_github_api_errors_total{status="404"}': 1.0}


# ----- repository config: size and parsing -------------------------------------------


async def test_an_oversized_config_is_shown_in_the_guide_and_the_defaults_apply(loopback):
    big = "lang: zh\n" + "".join(f"# padding line {i:06d} {'x' * 50}\n" for i in range(1200))
    assert len(big.encode()) > 64 * 1024
    loopback.sandbox.set_file(REPO, ".github/prguide.yml", big)
    await loopback.merged()
    (guide,) = guide_comments(loopback)
    assert "settings file has problems, so prguide ignores what they concern" in guide.body
    assert "prguide reads files of at most 65,536 bytes" in guide.body and "`.github/prguide.yml:1`" in guide.body
    assert parse_marker(guide.body).lang == "en"  # lang: zh was not read
    assert loopback.jobs()["done"] == 1


async def test_config_yaml_is_parsed_off_the_event_loop(loopback, monkeypatch):
    import threading

    import bot.feature_support as handlers

    seen: list[str] = []
    real = handlers.load_repo_config

    def spy(text, source):
        seen.append(threading.current_thread().name)
        return real(text, source)

    monkeypatch.setattr(handlers, "load_repo_config", spy)
    loopback.sandbox.set_file(REPO, ".github/prguide.yml", "lang: zh\n")
    await loopback.merged()
    assert seen and threading.main_thread().name not in seen
    (guide,) = guide_comments(loopback)
    assert parse_marker(guide.body).lang == "zh"


# ----- an optional read refused ----------------------------------------------------------


async def test_config_refused_with_403_still_gets_the_guide_with_the_missing_permission_named(loopback):
    loopback.sandbox.set_file(REPO, ".github/prguide.yml", "lang: zh\n")
    loopback.sandbox.set_permissions({"contents": None})
    await loopback.merged()

    contents = [r for r in loopback.sandbox.requests if "/contents/" in r["path"]]
    assert [r["status"] for r in contents] == [403]
    (guide,) = guide_comments(loopback)
    assert guide.body.count("could not be read") == 1
    assert "**Contents: read**" in guide.body and "installation settings" in guide.body
    assert parse_marker(guide.body).lang == "en"  # the defaults
    assert loopback.labels()  # and the labels as usual
    assert loopback.jobs() == {"queued": 0, "running": 0, "done": 1, "parked": 0}


# ----- refused label writes ---------------------------------------------------------------


def label_posts(lb) -> list[dict]:
    return [r for r in lb.sandbox.requests if r["method"] == "POST" and r["path"].endswith(f"/issues/{SMALL_PR}/labels")]


async def test_labels_beyond_githubs_100_are_not_sent_and_the_guide_names_them(loopback):
    # A human has put 99 labels on the pull request; the rules want three more.
    crowd = [f"team/{i:02d}" for i in range(99)]
    loopback.sandbox.change_labels(REPO, SMALL_PR, "ada", add=crowd)
    payload_labels = [{"name": n, "color": "ededed"} for n in crowd]
    await loopback.merged(labels=payload_labels)

    assert len(loopback.labels()) == 100
    assert [r["status"] for r in label_posts(loopback)] == [200]  # capped, so GitHub never said 422
    (guide,) = guide_comments(loopback)
    state = parse_marker(guide.body)
    ours = [n for n in loopback.labels() if n not in crowd]
    assert list(state.labels) == ours and len(ours) == 1  # the marker records only what was applied
    assert guide.body.count("GitHub allows at most 100 labels on a pull request") == 1
    assert loopback.jobs() == {"queued": 0, "running": 0, "done": 1, "parked": 0}


async def test_a_422_on_labels_is_not_retried_and_the_guide_is_posted(loopback):
    loopback.sandbox.add_faults([
        {"method": "POST", "path": f"/issues/{SMALL_PR}/labels", "status": 422, "message": "Validation Failed"}
    ])
    await loopback.merged()
    assert [r["status"] for r in label_posts(loopback)] == [422]  # once: not retried as if transient
    (guide,) = guide_comments(loopback)
    assert "These labels were not applied" in guide.body and "GitHub refused them: Validation Failed" in guide.body
    assert parse_marker(guide.body).labels == ()
    assert loopback.labels() == []
    assert loopback.jobs() == {"queued": 0, "running": 0, "done": 1, "parked": 0}


async def test_a_403_on_labels_posts_the_guide_and_names_the_missing_permission(loopback):
    loopback.sandbox.add_faults([
        {"method": "POST", "path": f"/issues/{SMALL_PR}/labels", "status": 403, "message": "Resource not accessible by integration"}
    ])
    await loopback.merged()
    (guide,) = guide_comments(loopback)
    assert guide.body.count("These labels were not applied") == 1 and "**Issues: write**" in guide.body
    assert parse_marker(guide.body).labels == ()
    assert loopback.jobs()["done"] == 1 and loopback.jobs()["parked"] == 0

    # Once the permission is granted, the next run applies them and drops the notice.
    await loopback.merged(delivery="d-2")
    (guide,) = guide_comments(loopback)
    assert "These labels were not applied" not in guide.body
    assert set(parse_marker(guide.body).labels) == set(loopback.labels()) != set()


# ----- credentials GitHub refuses ------------------------------------------------------------


async def test_a_wrong_private_key_shows_in_healthz_until_github_accepts_the_app(app_private_key, load_bundle_json, tmp_path, caplog):  # noqa: F811
    caplog.set_level(logging.INFO)
    wrong_key = generate_private_key_pem()
    bundle = load_bundle_json(SMALL_PR)
    async with start_sandbox(app_private_key, bundles=[bundle]) as sandbox:
        async with running_app(settings_for(sandbox, wrong_key, tmp_path), client_options={"sleep": _no_sleep}) as client:
            await client.app[STATE].credential_check  # the one GET /app at start
            assert [(r["method"], r["path"], r["status"]) for r in sandbox.requests] == [("GET", "/app", 401)] * 2
            resp = await client.get("/healthz")
            assert resp.status == 503
            health = await resp.json()
            assert health["ok"] is False and health["status"] == "degraded"
            (problem,) = health["problems"]
            assert "GitHub refuses the app's credentials (401 A JSON web token could not be decoded)" in problem
            assert "GITHUB_APP_ID (4242)" in problem and "private key" in problem
            assert "PRIVATE KEY" not in caplog.text

            # GitHub now knows the key this app signs with (the app's key was replaced there).
            sandbox.auth = Authenticator(sandbox.state, wrong_key)
            body = pr_delivery(bundle)
            raw = json.dumps(body).encode()
            assert (await client.post("/webhook", data=raw, headers=delivery_headers(raw))).status == 202
            await wait_idle(client.app)
            resp = await client.get("/healthz")
            assert resp.status == 200 and (await resp.json())["status"] == "ok"
            assert len(sandbox.comments(REPO, SMALL_PR)) == 1


async def _no_sleep(_seconds: float) -> None:
    return None


# ----- clock skew ------------------------------------------------------------------------------


@pytest.mark.parametrize(("github_ahead", "words"), [(-150, r"clock is 15[01] s ahead of GitHub's"), (11 * 60, r"clock is (659|660) s behind GitHub's")])
async def test_a_skewed_server_clock_is_learned_from_githubs_date_header(app_private_key, load_bundle_json, tmp_path, caplog, github_ahead, words):  # noqa: F811
    import time

    caplog.set_level(logging.INFO)
    bundles = {SMALL_PR: load_bundle_json(SMALL_PR), 7422: load_bundle_json(7422)}
    sandbox_options = {"clock": lambda: time.time() + github_ahead}
    async with start_loopback(app_private_key, tmp_path, bundles, sandbox_options=sandbox_options) as lb:
        auth = lb.state.services.auth
        assert abs(auth.clock_offset - github_ahead) <= 1  # learned from the start-up check's 401
        await lb.merged()
        await lb.merged(7422, delivery="d-2")
        assert len(guide_comments(lb)) == 1 and len(guide_comments(lb, 7422)) == 1
        assert not [r for r in lb.sandbox.requests if r["status"] == 401]  # no refusal once learned
        assert (await lb.client.get("/healthz")).status == 200
    skew_lines = [r for r in caplog.records if "clock is" in r.getMessage()]
    assert len(skew_lines) == 1 and re.search(words, skew_lines[0].getMessage())


# ----- renamed or transferred repositories ------------------------------------------------------


@pytest.mark.parametrize("write_status", [307, 301])
async def test_writes_to_a_moved_repository_are_repeated_at_the_new_location(loopback, write_status):
    loopback.sandbox.move_repo(REPO, write_status=write_status)
    repo_id = loopback.sandbox.state.repo(*REPO.split("/")).id
    await loopback.merged()

    (guide,) = guide_comments(loopback)
    assert loopback.labels() and set(parse_marker(guide.body).labels) == set(loopback.labels())
    log = [(r["method"], r["path"], r["status"]) for r in loopback.sandbox.requests]
    comments = f"/issues/{SMALL_PR}/comments"
    assert ("POST", f"/repos/{REPO}{comments}", write_status) in log
    assert ("POST", f"/repositories/{repo_id}{comments}", 201) in log
    # Never turned into a GET of the comment list.
    after = log[log.index(("POST", f"/repos/{REPO}{comments}", write_status)) + 1]
    assert after == ("POST", f"/repositories/{repo_id}{comments}", 201)
    assert ("GET", f"/repositories/{repo_id}/pulls/{SMALL_PR}/files?per_page=100&page=1", 200) in log
    assert loopback.jobs() == {"queued": 0, "running": 0, "done": 1, "parked": 0}
