"""``prguide demo``: the sandbox and the real webhook server, end to end, on loopback only."""

from __future__ import annotations

import copy
import functools
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import bot.demo as demo
from bot.app.routing import default_router
from bot.app.webhook import parse_delivery
from bot.cli import main
from bot.engine.marker import MARKER_PREFIX, has_marker, parse_marker

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

RULE_FILE = """\
labels:
  area/agent-loop: {color: "5319e7", description: The agent loop}
rules:
  - id: agent-loop
    files: ["verl/experimental/agent_loop/**"]
    labels: [area/agent-loop]
"""


@pytest.fixture
def bundle_file(tmp_path, load_bundle_json) -> Path:
    """Real merged PR #7491 of the corpus, written where the demo reads it."""
    path = tmp_path / "7491.json"
    path.write_text(json.dumps(load_bundle_json(7491)), encoding="utf-8")
    return path


def git(path: Path, *args: str, stdin: str | None = None) -> str:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(path),
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "Dev One",
        "GIT_AUTHOR_EMAIL": "dev@example.com",
        "GIT_AUTHOR_DATE": "@1700000000 +0000",
        "GIT_COMMITTER_NAME": "GitHub",
        "GIT_COMMITTER_EMAIL": "noreply@github.com",
        "GIT_COMMITTER_DATE": "@1700000060 +0000",
    }
    done = subprocess.run(
        ["git", "-C", str(path), *args], input=stdin, capture_output=True, text=True, env=env, check=True
    )
    return done.stdout.strip()


def make_repo(path: Path, subjects: list[str]) -> Path:
    """A repository with one commit per subject, each adding a small Python module and its test."""
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    for i, subject in enumerate(subjects):
        (path / "pkg").mkdir(exist_ok=True)
        (path / "tests").mkdir(exist_ok=True)
        (path / "pkg" / f"mod{i}.py").write_text(f"def parse_{i}(text):\n    return text.split(',')\n", encoding="utf-8")
        (path / "tests" / f"test_mod{i}.py").write_text(
            f"from pkg.mod{i} import parse_{i}\n\n\ndef test_parse_{i}():\n    assert parse_{i}('a,b') == ['a', 'b']\n",
            encoding="utf-8",
        )
        git(path, "add", "-A")
        git(path, "commit", "-q", "-F", "-", stdin=f"{subject}\n\nWhy this change was made.\n")
    return path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["demo", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def comment_of(out: str) -> str:
    """The comment body as printed: from the marker line to the closing rule."""
    start = out.index(MARKER_PREFIX)
    return out[start : out.index("\n" + "─" * 72, start)]


def api_call_count(out: str) -> int:
    match = re.search(r"^(\d+) API calls:$", out, re.MULTILINE)
    assert match, out
    return int(match.group(1))


# --- end to end, through ``prguide demo`` ---------------------------------------------------


def test_demo_on_a_corpus_bundle_prints_the_one_comment_labels_calls_and_time(capsys, bundle_file):
    code, out, err = run(capsys, "--bundle", str(bundle_file))

    assert code == 0, err
    assert out.startswith("prguide demo: verl-project/verl#7491 '[rollout] fix: preserve default AgentLoop extra fields'")
    assert out.count(MARKER_PREFIX) == 1
    assert "── comment by prguide[bot] " in out
    comment = comment_of(out)
    assert "Reading guide for #7491" in comment
    state = parse_marker(comment)
    assert state is not None and state.lang == "en"
    # The labels line shows what landed on the PR, the same labels the comment's marker records.
    labels_line = re.search(r"^labels: (.+)$", out, re.MULTILINE).group(1)
    assert labels_line.split(", ") == list(state.labels) and "type/fix" in labels_line
    calls = api_call_count(out)
    listed = re.findall(r"^\s+(\d+) × (GET|POST|PATCH|PUT|DELETE)\s+(\S+)\s+→ ([\d,]+)$", out, re.MULTILINE)
    assert sum(int(n) for n, *_ in listed) == calls
    assert ("1", "POST", "/repos/verl-project/verl/issues/7491/comments", "201") in listed
    assert ("1", "GET", "/repos/verl-project/verl/pulls/7491/files", "200") in listed
    assert re.search(r"^took \d+ ms from delivery to published guide \(\d+ ms in all\)$", out, re.MULTILINE)
    assert "note:" not in out


def test_demo_json_summary_is_machine_readable_and_consistent(capsys, bundle_file):
    code, out, _ = run(capsys, "--bundle", str(bundle_file), "--json")

    assert code == 0
    data = json.loads(out)
    assert data["ok"] is True and data["problems"] == []
    assert (data["repository"], data["number"], data["webhook_status"]) == ("verl-project/verl", 7491, 202)
    assert data["comment_count"] == 1 and data["comment"]["user"] == "prguide[bot]"
    assert has_marker(data["comment"]["body"])
    assert data["labels"] == list(parse_marker(data["comment"]["body"]).labels)
    endpoints = data["api_calls"]["endpoints"]
    assert data["api_calls"]["total"] == sum(e["count"] for e in endpoints) > 0
    assert all("?" not in e["path"] for e in endpoints)
    assert data["job"]["outcome"] == "created"
    assert data["job"]["labels_added"] == data["labels"]
    assert data["queue"] == {"queued": 0, "running": 0, "done": 1, "parked": 0}
    assert 0 < data["took_ms"] <= data["total_ms"]


def test_demo_in_chinese_with_an_extra_rule_file(capsys, bundle_file, tmp_path):
    rules = tmp_path / "team.yml"
    rules.write_text(RULE_FILE, encoding="utf-8")

    code, out, _ = run(capsys, "--bundle", str(bundle_file), "--lang", "zh", "--rules", str(rules), "--json")

    assert code == 0
    data = json.loads(out)
    assert parse_marker(data["comment"]["body"]).lang == "zh"
    assert "阅读指南" in data["comment"]["body"]
    assert "area/agent-loop" in data["labels"]


@needs_git
def test_demo_replays_the_newest_squash_merged_pull_request_of_a_repository(capsys, tmp_path):
    repo = make_repo(tmp_path / "shop", ["Initial import", "Add the CSV parser (#5)"])

    code, out, err = run(capsys, "--repo", str(repo))

    assert code == 0, err
    assert out.startswith("prguide demo: local/shop#5 'Add the CSV parser' from git repository ")
    assert "note:" not in out
    assert out.count(MARKER_PREFIX) == 1
    assert "Reading guide for #5" in comment_of(out)
    assert re.search(r"^labels: .*\btests\b", out, re.MULTILINE)
    assert api_call_count(out) > 0
    # The sandbox reads the repository's own files through the contents API.
    assert re.search(r"GET\s+/repos/local/shop/contents/\.github/prguide\.yml\s+→ 404", out)


@needs_git
def test_demo_presents_the_latest_commit_when_a_repository_has_no_merged_pull_request(capsys, tmp_path):
    repo = make_repo(tmp_path / "fresh", ["Initial import", "Teach the parser about quotes"])
    sha = git(repo, "rev-parse", "HEAD")

    code, out, err = run(capsys, "--repo", str(repo))

    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("prguide demo: local/fresh#1 'Teach the parser about quotes'")
    assert lines[1] == (
        f"note: no merged pull request in {repo}: presenting its latest commit {sha[:12]} "
        "('Teach the parser about quotes') as pull request #1"
    )
    assert out.count(MARKER_PREFIX) == 1
    assert "Reading guide for #1" in comment_of(out)
    assert api_call_count(out) > 0


# --- failures ----------------------------------------------------------------------------------


def test_a_missing_bundle_file_is_a_usage_error(capsys, tmp_path):
    code, out, err = run(capsys, "--bundle", str(tmp_path / "nope.json"))
    assert code == 2 and out == ""
    assert err.startswith(f"prguide demo: {tmp_path / 'nope.json'}: cannot be read")


def test_a_folder_that_is_not_a_git_repository_is_a_usage_error(capsys, tmp_path):
    code, _, err = run(capsys, "--repo", str(tmp_path))
    assert code == 2
    assert "not a git repository" in err and "--bundle FILE" in err


def test_bad_rule_files_are_a_usage_error(capsys, bundle_file, tmp_path):
    rules = tmp_path / "broken.yml"
    rules.write_text("rules:\n  - id: x\n    no_such_key: 1\n", encoding="utf-8")
    code, out, err = run(capsys, "--bundle", str(bundle_file), "--rules", str(rules))
    assert code == 2 and out == ""
    assert "broken.yml" in err


def test_a_job_that_fails_makes_the_demo_fail_with_the_server_log(capsys, bundle_file, monkeypatch):
    # GitHub refusing the comment: the job fails on its only attempt and is parked.
    refuse = [{"method": "POST", "path": r"/issues/\d+/comments$", "status": 422, "times": None}]
    monkeypatch.setattr(demo, "run_demo", functools.partial(demo.run_demo, faults=refuse))

    code, out, err = run(capsys, "--bundle", str(bundle_file))

    assert code == 1
    assert "(no comment landed)" in out and MARKER_PREFIX not in out
    assert "prguide demo: FAILED: the job ended 'error'" in err
    assert "prguide demo: FAILED: expected exactly one comment on verl-project/verl#7491, found 0" in err
    assert re.search(r"^prguide demo: FAILED: the server logged [1-9]\d* error\(s\)$", err, re.MULTILINE)
    assert "server log:" in err and "parked" in err


async def test_a_job_given_up_fails_the_demo_even_without_errors_in_the_log(load_bundle_json):
    source = demo.DemoSource(load_bundle_json(7491), origin="corpus #7491")
    # A pull request GitHub no longer knows: the job gives up (done, not retried).
    gone = [{"method": "GET", "path": r"/pulls/\d+/files", "status": 404, "times": None}]

    result = await demo.run_demo(source, faults=gone)

    assert not result.ok
    assert result.job["outcome"] == "given_up"
    assert result.queue == {"queued": 0, "running": 0, "done": 1, "parked": 0}
    assert result.problems[0].startswith("the job ended 'given_up'")
    assert not any("error(s)" in p for p in result.problems)
    assert result.comments == [] and result.labels == []
    assert result.to_json()["comment"] is None


# --- the delivery the demo sends ---------------------------------------------------------------


def test_the_event_has_the_keys_of_githubs_real_pull_request_closed_payload(webhook_payload, load_bundle_json):
    # An organization's repository: GitHub adds the ``organization`` object.
    real = webhook_payload("pull_request", "closed.with-organization.payload.json")
    pull = load_bundle_json(7491)["pull"]
    repository = {
        "id": 9, "node_id": "R_9", "name": "verl", "full_name": "verl-project/verl", "private": False,
        "owner": {"login": "verl-project", "type": "Organization"}, "html_url": "https://github.com/verl-project/verl",
        "default_branch": "main", "stargazers_count": 1, "permissions": {"admin": False},
    }  # fmt: skip

    before = copy.deepcopy(pull)

    event = demo.merged_event(pull, repository, installation_id=1)

    assert list(event) == list(real)
    assert event["action"] == "closed" and event["number"] == 7491
    assert event["pull_request"]["merged"] is True and event["pull_request"]["state"] == "closed"
    # The webhook's repository object: every key GitHub's example has, values from "Get a repository",
    # and nothing a webhook's repository does not carry (the caller's "permissions").
    assert set(real["repository"]) <= set(event["repository"])
    assert "permissions" not in event["repository"]
    assert event["repository"]["stargazers_count"] == 1 and event["repository"]["default_branch"] == "main"
    assert set(real["repository"]["owner"]) <= set(event["repository"]["owner"])
    assert set(real["pull_request"]) <= set(event["pull_request"])
    assert set(real["organization"]) <= set(event["organization"])
    assert event["organization"]["login"] == "verl-project"
    assert event["installation"] == real["installation"]  # {"id": 1, "node_id": GitHub's for installation 1}
    # merged_by is unknown in the corpus: the author, completed to a full user object.
    assert {key: event["sender"][key] for key in pull["user"]} == pull["user"]
    assert set(real["sender"]) <= set(event["sender"]) and set(real["sender"]) <= set(event["pull_request"]["user"])
    assert event["repository"]["id"] == 9
    assert pull == before  # the bundle itself is not modified
    with pytest.raises(ValueError, match="integer 'number'"):
        demo.merged_event({"number": "7"}, repository, installation_id=1)


def test_the_signed_delivery_is_accepted_and_routed_by_the_server(load_bundle_json):
    repository = {"id": 9, "name": "verl", "full_name": "verl-project/verl", "owner": {"login": "verl-project", "type": "User"}}
    body = json.dumps(demo.merged_event(load_bundle_json(7491)["pull"], repository, installation_id=3)).encode()
    headers = demo.delivery_headers(body, "s3cret", "d-1")

    assert headers["User-Agent"].startswith("GitHub-Hookshot/")
    delivery = parse_delivery(headers, body, secret="s3cret")
    assert (delivery.event, delivery.action, delivery.installation_id, delivery.key) == (
        "pull_request", "closed", 3, "verl-project/verl#7491",
    )  # fmt: skip
    route, reason = default_router().decide(delivery)
    assert route is not None, reason


def test_requests_are_grouped_by_method_and_path_without_the_query():
    calls = demo.group_requests(
        [
            {"method": "GET", "path": "/repos/o/r/pulls/1/files?per_page=100", "status": 200},
            {"method": "POST", "path": "/repos/o/r/issues/1/comments", "status": 201},
            {"method": "GET", "path": "/repos/o/r/pulls/1/files?per_page=100&page=2", "status": 200},
            {"method": "GET", "path": "/repos/o/r/pulls/1/files", "status": 304},
        ]
    )
    assert calls == [
        demo.ApiCall("GET", "/repos/o/r/pulls/1/files", 3, (200, 304)),
        demo.ApiCall("POST", "/repos/o/r/issues/1/comments", 1, (201,)),
    ]


def test_generated_app_keys_are_fresh_2048_bit_rsa_pem():
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    first, second = demo.generate_private_key(), demo.generate_private_key()
    assert first != second
    assert first.startswith("-----BEGIN PRIVATE KEY-----")
    assert load_pem_private_key(first.encode(), password=None).key_size == 2048


@needs_git
def test_a_root_commit_is_presented_with_every_file_added(tmp_path):
    repo = make_repo(tmp_path / "one", ["First and only commit"])

    bundle = demo.latest_commit_bundle(repo)

    pull = bundle["pull"]
    assert (pull["number"], pull["title"], pull["body"]) == (1, "First and only commit", "Why this change was made.")
    assert pull["merged"] is True and pull["base"]["sha"] is None
    assert pull["head"]["sha"] == bundle["_meta"]["commit"] == git(repo, "rev-parse", "HEAD")
    assert bundle["_meta"]["kind"] == "commit"
    assert {(f["filename"], f["status"]) for f in bundle["files"]} == {
        ("pkg/mod0.py", "added"),
        ("tests/test_mod0.py", "added"),
    }
