"""The deliveries ``prguide send`` and the sandbox build have GitHub's shapes, and prguide reads them as GitHub's.

Shapes are checked against GitHub's own example deliveries (``shared/fixtures/webhooks``,
octokit/webhooks): every key of the example is there, nested users are full user
objects, and the server parses, routes and reads each one as it would GitHub's.
"""

from __future__ import annotations

import json

import pytest

from bot import github_objects as objects
from bot import payloads
from bot.app.routing import default_router
from bot.app.webhook import parse_delivery
from bot.app.webhook import sign as server_sign
from bot.cli import build_parser
from bot.commands.handler import comment_facts
from bot.send import build_payload

SECRET = "payload secret"
USER_KEYS = set(objects.user("x"))


def parsed(event: str, payload: dict, delivery: str = "d-1"):
    body = json.dumps(payload).encode()
    return parse_delivery(payloads.delivery_headers(body, SECRET, delivery, event), body, secret=SECRET)


def args(*argv: str):
    return build_parser().parse_args(["send", *argv, "--print"])


def full_users(value, path="payload"):
    """Every object with a ``login`` inside ``value`` has the keys of a full user object."""
    if isinstance(value, dict):
        if "login" in value and "type" in value:
            assert USER_KEYS <= set(value), f"{path} is not a full user object: {sorted(USER_KEYS - set(value))}"
        for key, item in value.items():
            full_users(item, f"{path}.{key}")
    elif isinstance(value, list):
        for n, item in enumerate(value):
            full_users(item, f"{path}[{n}]")


def test_the_signature_is_the_one_the_server_checks():
    body = b'{"action": "closed"}'
    assert payloads.sign(SECRET, body) == server_sign(SECRET, body)
    headers = payloads.delivery_headers(body, SECRET, "d-9", "ping", app_id=7)
    assert headers["X-GitHub-Hook-Installation-Target-ID"] == "7" and headers["User-Agent"].startswith("GitHub-Hookshot/")


def test_every_event_prguide_acts_on_can_be_sent():
    from bot.features import FEATURES

    routed = {f"{route.event}.{action}" for routes in FEATURES for route in routes if not route.internal for action in route.actions}
    assert routed <= set(payloads.EVENTS)
    assert {"installation.deleted", "installation_repositories.removed", "ping"} <= set(payloads.EVENTS)


def test_a_merged_pull_request(webhook_payload, tmp_path):
    real = webhook_payload("pull_request", "closed.with-organization.payload.json")
    bundle = {
        "pull": {"number": 7, "title": "Tidy", "user": {"login": "alice", "type": "User"}, "merged_at": "2024-05-01T10:00:00Z",
                 "base": {"ref": "main", "repo": {"full_name": "octo-org/demo", "default_branch": "trunk",
                                                  "owner": {"login": "octo-org", "type": "Organization"}}}},
        "files": [], "reviews": [], "review_comments": [],
    }  # fmt: skip
    path = tmp_path / "7.json"
    path.write_text(json.dumps(bundle), encoding="utf-8")

    payload = build_payload(args("pull_request.closed", "--bundle", str(path), "--installation", "12"))

    assert list(payload) == list(real)
    assert set(real["pull_request"]) <= set(payload["pull_request"])
    assert set(real["repository"]) <= set(payload["repository"])
    assert set(real["pull_request"]["head"]) <= set(payload["pull_request"]["head"])
    assert payload["repository"]["default_branch"] == "trunk"
    pull = payload["pull_request"]
    assert (pull["merged"], pull["merged_at"], pull["state"], pull["closed_at"]) == (True, "2024-05-01T10:00:00Z", "closed", "2024-05-01T10:00:00Z")
    assert payload["sender"]["login"] == "alice"
    full_users(payload)
    delivery = parsed("pull_request", payload)
    assert (delivery.installation_id, delivery.key) == (12, "octo-org/demo#7")
    assert default_router().decide(delivery) == (default_router().route("pull_request", "closed"), None)

    moved = build_payload(args("pull_request.closed", "--bundle", str(path), "--repo", "elsewhere/place"))
    assert moved["repository"]["full_name"] == moved["pull_request"]["base"]["repo"]["full_name"] == "elsewhere/place"
    assert parsed("pull_request", moved).key == "elsewhere/place#7"

    unmerged = build_payload(args("pull_request.closed", "--bundle", str(path), "--unmerged"))
    assert (unmerged["pull_request"]["merged"], unmerged["pull_request"]["merged_at"]) == (False, None)
    assert default_router().decide(parsed("pull_request", unmerged))[1] == "closed without merging"


def test_a_comment_on_a_pull_request(webhook_payload):
    real = webhook_payload("issue_comment", "created.with-installation.payload.json")
    payload = build_payload(
        args("issue_comment.created", "--repo", "octo/demo", "--pr", "3", "--body", "/prguide why 1", "--user", "alice",
             "--author", "bob", "--installation", "5", "--comment-id", "77")
    )  # fmt: skip

    assert set(real) - {"organization"} <= set(payload)  # octo/demo's owner is a user: no organization
    assert set(real["issue"]) <= set(payload["issue"]) and set(real["comment"]) <= set(payload["comment"])
    assert set(payload["issue"]["pull_request"]) == {"url", "html_url", "diff_url", "patch_url", "merged_at"}
    assert payload["issue"]["pull_request"]["merged_at"] and payload["issue"]["state"] == "closed"
    assert payload["repository"]["default_branch"] == "main"
    full_users(payload)
    delivery = parsed("issue_comment", payload)
    assert (delivery.installation_id, delivery.key, delivery.sender_login) == (5, "octo/demo#3", "alice")
    route, reason = default_router().decide(delivery)
    assert route is not None, reason
    facts = comment_facts(payload)
    assert (facts.comment_id, facts.actor, facts.author, facts.body) == (77, "alice", "bob", "/prguide why 1")
    assert facts.pull.merged and facts.pull_known and facts.private is False

    edited = build_payload(
        args("issue_comment.edited", "--repo", "octo/demo", "--pr", "3", "--body", "/prguide refresh", "--previous-body", "hi")
    )
    assert edited["changes"] == {"body": {"from": "hi"}}
    assert comment_facts(edited).before == "hi" and comment_facts(edited).edited

    opened = build_payload(args("issue_comment.created", "--repo", "octo/demo", "--pr", "3", "--body", "x", "--pr-state", "open"))
    facts = comment_facts(opened)
    assert (facts.pull.merged, facts.pull.open, facts.pull_known) == (False, True, True)


def test_reviews_and_inline_review_comments(webhook_payload):
    for event, name in (("pull_request_review", "submitted.payload.json"), ("pull_request_review_comment", "created.payload.json")):
        real = webhook_payload(event, name)
        action = name.split(".")[0]
        payload = build_payload(
            args(f"{event}.{action}", "--repo", "octo/demo", "--pr", "4", "--body", "/prguide why", "--user", "carol", "--comment-id", "9")
        )
        assert list(payload) == list(real), event
        written = payload["review" if event == "pull_request_review" else "comment"]
        assert set(real["review" if event == "pull_request_review" else "comment"]) <= set(written)
        assert set(real["pull_request"]) <= set(payload["pull_request"])
        full_users(payload)
        delivery = parsed(event, payload)
        route, reason = default_router().decide(delivery)
        assert route is not None, reason
        facts = comment_facts(payload, event)
        assert (facts.comment_id, facts.actor, facts.number, facts.pull.merged) == (9, "carol", 4, True)


def test_installations_and_their_repositories(webhook_payload):
    real = webhook_payload("installation", "created.payload.json")
    payload = build_payload(args("installation.created", "--installation", "8", "--repo", "octo-org/a", "--repo", "octo-org/b"))
    assert set(real) <= set(payload)
    assert set(real["installation"]) <= set(payload["installation"])
    assert payload["installation"]["id"] == 8 and payload["installation"]["repository_selection"] == "selected"
    assert payload["installation"]["account"]["login"] == "octo-org" and payload["installation"]["target_type"] == "Organization"
    assert [set(r) for r in payload["repositories"]] == [set(real["repositories"][0])] * 2
    assert [r["full_name"] for r in payload["repositories"]] == ["octo-org/a", "octo-org/b"]
    full_users(payload)
    delivery = parsed("installation", payload)
    assert delivery.installation_id == 8 and delivery.key is None
    assert default_router().decide(delivery)[0] is not None

    # An installation on all of an account's repositories: GitHub may leave the list out.
    everything = build_payload(args("installation.created", "--account", "octo-org"))
    assert "repositories" not in everything and everything["installation"]["repository_selection"] == "all"

    deleted = build_payload(args("installation.deleted", "--repo", "octo-org/a"))
    assert deleted["action"] == "deleted" and set(webhook_payload("installation", "deleted.payload.json")) <= set(deleted)

    real = webhook_payload("installation_repositories", "added.payload.json")
    added = build_payload(args("installation_repositories.added", "--repo", "octo-org/c"))
    assert list(added) == list(real)
    assert [r["full_name"] for r in added["repositories_added"]] == ["octo-org/c"] and added["repositories_removed"] == []
    removed = build_payload(args("installation_repositories.removed", "--repo", "octo-org/c"))
    assert removed["repositories_added"] == [] and [r["full_name"] for r in removed["repositories_removed"]] == ["octo-org/c"]
    full_users(added)


def test_repository_visibility_changes():
    made_private = build_payload(args("repository.privatized", "--repo", "octo-org/a", "--installation", "4"))
    assert list(made_private) == ["action", "repository", "organization", "sender", "installation"]
    assert made_private["action"] == "privatized" and made_private["repository"]["private"] is True
    assert set(objects.repository("octo-org/a")) - {"permissions"} <= set(made_private["repository"])
    assert made_private["organization"]["login"] == "octo-org" and made_private["installation"]["id"] == 4
    full_users(made_private)
    delivery = parsed("repository", made_private)
    assert (delivery.installation_id, delivery.action) == (4, "privatized")
    assert default_router().decide(delivery)[0] is not None

    # A user's repository: no organization, the owner made the change.
    made_public = build_payload(args("repository.publicized", "--repo", "octo/a", "--account-type", "User"))
    assert list(made_public) == ["action", "repository", "sender", "installation"]
    assert made_public["repository"]["private"] is False and made_public["sender"]["login"] == "octo"
    deleted = build_payload(args("repository.deleted", "--repo", "octo-org/a", "--sender", "mo"))
    assert deleted["action"] == "deleted" and deleted["sender"]["login"] == "mo"
    assert default_router().decide(parsed("repository", deleted))[0] is not None


def test_ping(webhook_payload):
    real = webhook_payload("ping", "with-app_id.payload.json")
    payload = build_payload(args("ping", "--app-id", "42", "--url", "http://127.0.0.1:9/webhook"))
    assert {"zen", "hook_id", "hook"} <= set(payload)
    assert set(real["hook"]) - {"test_url", "ping_url", "url", "last_response"} <= set(payload["hook"])
    assert payload["hook"]["app_id"] == 42 and payload["hook"]["type"] == "App"
    assert parsed("ping", payload).event == "ping"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["issue_comment.created", "--pr", "3", "--body", "x"], "needs --repo"),
        (["issue_comment.created", "--repo", "o/r", "--body", "x"], "needs --pr"),
        (["issue_comment.created", "--repo", "o/r", "--pr", "3"], "needs --body"),
        (["issue_comment.created", "--repo", "o", "--pr", "3", "--body", "x"], "OWNER/NAME"),
        (["issue_comment.edited", "--repo", "o/r", "--pr", "3", "--body", "x"], "--previous-body"),
        (["installation_repositories.added"], "--repo"),
        (["repository.privatized"], "--repo"),
        (["repository.deleted", "--repo", "o/r", "--repo", "o/s"], "give --repo once"),
        (["repository.renamed", "--repo", "o/r"], "--former OWNER/NAME"),
        (["issue_comment.created", "--repo", "o/r", "--repo", "o/s", "--pr", "3", "--body", "x"], "give --repo once"),
    ],
)
def test_options_that_make_no_delivery_say_what_is_missing(argv, message):
    from bot.send import SendError

    with pytest.raises(SendError, match=message):
        build_payload(args(*argv))


@pytest.mark.parametrize("event, former", [("repository.renamed", "octo-org/old"), ("repository.transferred", "someone/a")])
def test_a_renamed_or_transferred_repository_says_its_former_name_as_github_does(event, former):
    from bot.features.visibility import former_name

    payload = build_payload(args(event, "--repo", "octo-org/a" if event.endswith("transferred") else "octo-org/new",
                                 "--former", former, "--installation", "4"))  # fmt: skip
    assert list(payload)[:3] == ["action", "changes", "repository"]
    assert former_name(payload) == former
    full_users(payload)


def test_objects_given_keep_their_fields_and_gain_the_rest():
    repo = objects.fill_repository({"full_name": "o/r", "id": 5, "stargazers_count": 3, "private": True})
    assert set(objects.repository("x/y")) <= set(repo)
    assert (repo["id"], repo["stargazers_count"], repo["private"], repo["visibility"]) == (5, 3, True, "private")
    pull = objects.pull_request({"number": 2, "title": "T", "user": {"login": "u", "type": "Bot", "id": 4}, "extra": 1}, repo)
    assert (pull["title"], pull["extra"], pull["user"]["id"], pull["user"]["type"]) == ("T", 1, 4, "Bot")
    assert pull["base"]["repo"]["full_name"] == "o/r" and pull["merged"] is False and pull["state"] == "open"
    # A delivery's repository never carries a caller's permissions (only REST answers do).
    delivered = payloads.merged_pull_request(pull, {**repo, "permissions": {"admin": True}}, installation_id=1)
    assert "permissions" not in delivered["repository"] and delivered["repository"]["stargazers_count"] == 3
    with pytest.raises(ValueError):
        payloads.merged_pull_request({"number": 2}, {"full_name": "not-a-name"}, installation_id=1)
    with pytest.raises(ValueError):
        payloads.merged_pull_request({"number": "2"}, repo, installation_id=1)
