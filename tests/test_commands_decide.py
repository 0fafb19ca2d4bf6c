"""Who may do what, and what the commands of one comment turn into (no GitHub involved)."""

from __future__ import annotations

import pytest

from bot.commands.decide import (
    Actor,
    AddLabels,
    Explain,
    PullState,
    Rebuild,
    Refuse,
    Remembered,
    RemoveLabels,
    ShowHelp,
    decide,
    needs_role,
)
from bot.commands.parse import parse_commands
from bot.engine.marker import MarkerState

MERGED = PullState(merged=True)
OPEN = PullState(merged=False, open=True)
CLOSED = PullState(merged=False, open=False)

ADMIN = Actor("ada", "admin")
MAINTAINER = Actor("mo", "maintain")
WRITER = Actor("wu", "write")
TRIAGER = Actor("tri", "triage")
READER = Actor("rita", "read")
STRANGER = Actor("sam", "none")
AUTHOR = Actor("alice", "read", is_author=True)


def run(body: str, actor: Actor, *, pull: PullState = MERGED, remembered: Remembered = Remembered(), relabel=("maintainers",)):
    return decide(parse_commands(body), actor, remembered, pull, relabel=relabel)


def kinds(actions) -> list[str]:
    return [type(a).__name__ for a in actions]


PERMISSIONS = [
    # (command, actor, relabel, allowed)
    ("refresh", ADMIN, (), True),
    ("refresh", MAINTAINER, (), True),
    ("refresh", WRITER, (), True),
    ("refresh", AUTHOR, (), True),
    ("refresh", TRIAGER, (), False),
    ("refresh", READER, (), False),
    ("refresh", STRANGER, (), False),
    ("lang zh", AUTHOR, (), True),
    ("lang zh", READER, (), False),
    ("label add bug", WRITER, ("maintainers",), True),
    ("label add bug", MAINTAINER, ("maintainers",), True),
    ("label add bug", AUTHOR, ("maintainers",), False),
    ("label add bug", AUTHOR, ("maintainers", "authors"), True),
    ("label add bug", READER, ("maintainers", "authors"), False),
    ("label remove bug", STRANGER, ("maintainers",), False),
    ("label remove bug", ADMIN, ("authors",), True),
    ("why", STRANGER, (), True),
    ("why bug", READER, (), True),
    ("help", STRANGER, (), True),
]


@pytest.mark.parametrize("command, actor, relabel, allowed", PERMISSIONS)
def test_who_may_do_what(command, actor, relabel, allowed):
    actions = run(f"/prguide {command}", actor, relabel=relabel)
    refused = [a for a in actions if isinstance(a, Refuse)]
    assert (not refused) is allowed
    if not allowed:
        assert refused[0].reason.startswith("cmd.deny.")


def test_denial_reasons_name_the_rule():
    (refusal,) = run("/prguide label add bug", READER)
    assert refusal.reason == "cmd.deny.label"
    (refusal,) = run("/prguide label add bug", READER, relabel=("maintainers", "authors"))
    assert refusal.reason == "cmd.deny.label_authors"
    (refusal,) = run("/prguide refresh", READER)
    assert refusal.reason == "cmd.deny.author"


def test_bad_command_is_refused_for_anyone_with_its_parse_error():
    (refusal,) = run("/prguide lang fr", ADMIN)
    assert refusal.reason == "cmd.err.lang_unknown"
    assert refusal.params == {"value": "fr"}


def test_refresh_rebuilds_with_what_the_marker_remembers():
    remembered = Remembered(lang="zh", human_added=("keep",), human_removed=("drop",))
    (action,) = run("/prguide refresh", WRITER, remembered=remembered)
    assert action == Rebuild(lang="zh", labels_added=("keep",), labels_removed=("drop",), preview=False)


def test_lang_switches_and_is_remembered():
    (action,) = run("/prguide lang zh", AUTHOR, remembered=Remembered(lang="en"))
    assert action == Rebuild(lang="zh")


def test_label_commands_change_labels_then_rebuild_once():
    remembered = Remembered(lang="en", human_added=("old",), human_removed=("bug",))
    actions = run("/prguide label add bug docs\n/prguide label remove old\n/prguide refresh", WRITER, remembered=remembered)
    assert actions == [
        RemoveLabels(("old",)),
        AddLabels(("bug", "docs")),
        Rebuild(lang="en", labels_added=("bug", "docs"), labels_removed=("old",)),
    ]


def test_later_label_command_wins_for_the_same_label():
    actions = run("/prguide label add Bug\n/prguide label remove bug", WRITER)
    assert actions == [RemoveLabels(("bug",)), Rebuild(lang=None, labels_removed=("bug",))]


def test_open_pull_request_gets_a_preview_and_closed_one_nothing():
    (action,) = run("/prguide refresh", WRITER, pull=OPEN)
    assert action.preview is True
    (refusal,) = run("/prguide refresh", WRITER, pull=CLOSED)
    assert refusal.reason == "cmd.deny.closed"
    assert kinds(run("/prguide why\n/prguide help", STRANGER, pull=CLOSED)) == ["Explain", "ShowHelp"]


def test_mixed_comment_orders_changes_replies_then_refusals():
    body = "/prguide help\n/prguide why area/x\n/prguide nope\n/prguide lang zh"
    actions = run(body, WRITER)
    assert actions == [
        Rebuild(lang="zh"),
        ShowHelp(),
        Explain("area/x"),
        Refuse(parse_commands("/prguide nope")[0], "cmd.err.unknown", {"value": "nope"}),
    ]


def test_partial_permission_runs_what_is_allowed():
    actions = run("/prguide why\n/prguide label add bug", STRANGER)
    assert kinds(actions) == ["Explain", "Refuse"]


def test_remembered_comes_from_the_marker():
    state = MarkerState(lang="zh", human_lang="zh", human_added=("a",), human_removed=("b",))
    assert Remembered.from_marker(state) == Remembered("zh", ("a",), ("b",))
    # A guide written in Chinese because of the repository's config is not a human's choice.
    assert Remembered.from_marker(MarkerState(lang="zh")).lang is None
    assert Remembered.from_marker(None) == Remembered()


NEEDS_ROLE = [
    ("/prguide help", False, False),
    ("/prguide why", False, False),
    ("/prguide nonsense", False, False),
    ("/prguide refresh", True, False),
    ("/prguide refresh", False, True),
    ("/prguide label add x", True, True),
]


@pytest.mark.parametrize("body, is_author, expected", NEEDS_ROLE)
def test_role_is_looked_up_only_when_it_matters(body, is_author, expected):
    assert needs_role(parse_commands(body), is_author=is_author) is expected


def test_author_relabel_needs_no_lookup_when_authors_may():
    assert needs_role(parse_commands("/prguide label add x"), is_author=True, authors_relabel=True) is False


# ----- reading the webhook payload ----------------------------------------------------

from sandbox_helpers import comment_payload as delivered_comment  # noqa: E402

from bot.commands.handler import comment_facts, ignore_reason  # noqa: E402
from bot.github_objects import fill_user  # noqa: E402


def comment_payload(body="/prguide help", *, user=None, sender=None, pr=True, action="created", before=None, merged_at="2024-05-01T10:00:00Z", state="closed"):
    """An ``issue_comment`` payload as GitHub sends it for a comment on ``o/r#7``, with the
    ``sender`` (another user editing) or the issue (``pr=False``: not a pull request) changed."""
    user = user or {"login": "alice", "type": "User"}
    payload = delivered_comment(
        body, repo="o/r", number=7, user=user["login"], user_type=user["type"], action=action, before=before,
        merged_at=merged_at, state=state,
    )  # fmt: skip
    if sender is not None:
        payload["sender"] = fill_user(sender)
    if not pr:
        del payload["issue"]["pull_request"]
    return payload


IGNORED = [
    ("an issue, not a pull request", comment_payload(pr=False), "not a pull request"),
    ("a bot's comment", comment_payload(user={"login": "dependabot[bot]", "type": "Bot"}), "written by a bot"),
    ("a [bot] login without the type", comment_payload(user={"login": "prguide[bot]", "type": "User"}), "written by a bot"),
    ("edited by a bot", comment_payload(sender={"login": "prguide[bot]", "type": "Bot"}), "written by a bot"),
    ("prguide's marker", comment_payload("<!-- prguide:v1 {} -->\n/prguide refresh"), "no commands"),
    ("no prefix at all", comment_payload("LGTM"), "no commands"),
    ("edit that kept the body", comment_payload(action="edited"), "the comment's text did not change"),
]


@pytest.mark.parametrize("payload, reason", [c[1:] for c in IGNORED], ids=[c[0] for c in IGNORED])
def test_comments_that_carry_no_commands_are_not_queued(payload, reason):
    assert ignore_reason(payload) == reason


def test_command_comments_are_queued():
    assert ignore_reason(comment_payload()) is None
    assert ignore_reason(comment_payload("@prguide why")) is None
    assert ignore_reason(comment_payload(action="edited", before="")) is None


def test_comment_facts_read_the_pull_request_state_and_the_editor():
    payload = comment_payload(action="edited", before="old", sender={"login": "mo", "type": "User"})
    facts = comment_facts(payload)
    assert (facts.repository, facts.number, facts.comment_id) == ("o/r", 7, payload["comment"]["id"])
    assert (facts.actor, facts.author, facts.before, facts.edited) == ("mo", "alice", "old", True)
    assert facts.pull == PullState(merged=True, open=False)
    assert facts.private is False
    open_pr = comment_facts(comment_payload(merged_at=None, state="open"))
    assert open_pr.pull == PullState(merged=False, open=True)
