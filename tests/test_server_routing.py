"""Routing decisions and the pieces of the merged-PR job that need no network."""

from __future__ import annotations

import pytest

from bot.app.routing import Route, Router, Services, default_router
from bot.features.guide import MERGED_PULL_REQUEST, accept_merged
from bot.feature_support import config_notices
from bot.app.webhook import Delivery
from bot.engine.repo_config import parse_repo_config
from bot.engine.rules import parse_rules
from bot.engine.rules.model import Problem


async def nothing(job, ctx):
    return None


def delivery(event: str, action: str | None, payload: dict | None = None, key: str | None = "o/r#1") -> Delivery:
    return Delivery(id="d", event=event, action=action, payload=payload or {}, body=b"{}", installation_id=1, key=key)


def merged_payload(merged: object = True, sender_type: str = "User") -> dict:
    return {"pull_request": {"number": 1, "merged": merged}, "sender": {"login": "someone", "type": sender_type}}


def test_action_route_wins_over_all_actions_route():
    specific = Route("issue_comment", ("created",), nothing)
    catch_all = Route("issue_comment", (), nothing)
    router = Router([catch_all, specific])
    assert router.route("issue_comment", "created") is specific
    assert router.route("issue_comment", "deleted") is catch_all
    assert router.route("issues", "opened") is None


def test_a_second_route_for_the_same_action_is_refused():
    router = Router([Route("pull_request", ("closed",), nothing)])
    with pytest.raises(ValueError, match="pull_request.closed"):
        router.add(Route("pull_request", ("closed", "reopened"), nothing))


@pytest.mark.parametrize(
    "d, reason",
    [
        (delivery("pull_request", "closed", merged_payload()), None),
        (delivery("pull_request", "closed", merged_payload(merged=False)), "closed without merging"),
        (delivery("pull_request", "closed", merged_payload(merged="true")), "closed without merging"),
        (delivery("pull_request", "closed", merged_payload(sender_type="Bot")), None),
        (delivery("pull_request", "closed", merged_payload(), key=None), "the delivery names no pull request"),
        (delivery("pull_request", "opened", merged_payload()), "prguide does not act on pull_request.opened"),
        (delivery("ping", None), "prguide does not act on ping"),
    ],
)
def test_default_routing_decisions(d, reason):
    route, why = default_router().decide(d)
    assert why == reason
    assert (route is MERGED_PULL_REQUEST) == (reason is None)


def test_routes_refuse_bots_unless_they_say_otherwise():
    router = Router([Route("issue_comment", ("created",), nothing)])
    payload = {"sender": {"login": "renovate[bot]", "type": "User"}}
    route, why = router.decide(delivery("issue_comment", "created", payload))
    assert route is None and why == "sent by the bot renovate[bot]"


def test_accept_merged_reads_only_the_payload():
    assert accept_merged(delivery("pull_request", "closed", {"pull_request": {}})) == "closed without merging"


def test_config_notices_name_the_file_and_first_problems():
    problems = tuple(Problem(".github/prguide.yml", i, f"problem `{i}`") for i in range(1, 6))
    notices = config_notices(".github/prguide.yml", problems)
    (en,) = notices["en"]
    (zh,) = notices["zh"]
    assert en.startswith("prguide's settings file has problems, so prguide ignores what they concern")
    assert "`.github/prguide.yml:1`: problem '1'" in en and "prguide.yml:3`" in en and "prguide.yml:4`" not in en
    assert "(and 2 more)" in en
    assert "另有 2 处" in zh
    assert config_notices(".github/prguide.yml", ()) is None


def services_with(base_text: str) -> Services:
    return Services(settings=None, clients=None, auth=None, rules=parse_rules(base_text, "base.yml"), metrics=None)


BASE = "rules:\n  - id: docs\n    files: docs/**\n    labels: [docs]\n"


def test_repository_rules_are_merged_onto_the_base():
    services = services_with(BASE)
    config = parse_repo_config("rules:\n  - id: engine\n    files: src/**\n    labels: [engine]\n")
    rules, problems = services.rules_for(config)
    assert rules.rule_ids == ("docs", "engine") and problems == ()
    assert services.rules_for(parse_repo_config("lang: zh\n")) == (services.rules, ())


def test_a_repository_rule_clashing_with_a_base_rule_falls_back_to_the_base():
    services = services_with(BASE)
    config = parse_repo_config("rules:\n  - id: docs\n    files: manual/**\n    labels: [manual]\n")
    rules, problems = services.rules_for(config)
    assert rules is services.rules
    assert problems and "docs" in str(problems[0])
